# Photon propagation on the host backend against analytic answers, the
# traps Chroma users hit, and (label gpu) the CUDA backend against the host.
prism_test(NAME propagate SOURCES test_propagate.c kernels_test_scene.c TIMEOUT 300)
prism_test(NAME propagate_gpu SOURCES test_propagate_gpu.c gpu_compare.c kernels_test_scene.c
           LABELS gpu TIMEOUT 600)
# One propagation across several contexts (host backend: contexts stand in
# for devices) against one call.
prism_test(NAME propagate_multi SOURCES test_propagate_multi.c kernels_test_scene.c TIMEOUT 120)
# The pipeline (prism_propagate_stream) and the hits and summary made where
# the photons are, on the host backend, against one call.
prism_test(NAME propagate_stream SOURCES test_propagate_stream.c kernels_test_scene.c TIMEOUT 300)
