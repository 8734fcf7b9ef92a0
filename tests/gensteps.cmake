# Gensteps (Cerenkov and scintillation photons made where they are
# propagated) and the muon source on the host backend, against the
# formulas; (label gpu) the CUDA backend's photons against the host's, bit
# for bit.
prism_test(NAME gensteps SOURCES test_gensteps.c kernels_test_scene.c TIMEOUT 300)
prism_test(NAME gensteps_gpu SOURCES test_gensteps_gpu.c kernels_test_scene.c LABELS gpu
           TIMEOUT 300)
