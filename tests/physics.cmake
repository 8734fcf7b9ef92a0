# The per-photon physics against theory on the host backend (Fresnel,
# Rayleigh, free paths, Geant4's surface models, bulk reemission), and
# (label gpu) the same through prism_propagate on CUDA, with host-vs-CUDA
# bit identity on a scene that uses them.
prism_test(NAME physics SOURCES test_physics.c kernels_test_scene.c TIMEOUT 300)
prism_test(NAME physics_gpu SOURCES test_physics_gpu.c gpu_compare.c kernels_test_scene.c
           LABELS gpu TIMEOUT 600)
