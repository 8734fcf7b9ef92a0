# prism_photons_select (the hits, filtered where the photons are): the host
# backend against a plain loop, its errors, and (label gpu) CUDA against
# the host, byte for byte.
prism_test(NAME select SOURCES test_select.c)
prism_test(NAME select_gpu SOURCES test_select_gpu.c gpu_compare.c kernels_test_scene.c LABELS gpu)
