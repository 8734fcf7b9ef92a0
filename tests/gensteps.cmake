# Gensteps (Cerenkov and scintillation photons made where they are
# propagated) and the muon source on the host backend, against the
# formulas; (label gpu) the CUDA backend's photons against the host's, bit
# for bit.
prism_test(NAME gensteps SOURCES test_gensteps.c kernels_test_scene.c TIMEOUT 300)
prism_test(NAME gensteps_gpu SOURCES test_gensteps_gpu.c gpu_compare.c kernels_test_scene.c
           LABELS gpu TIMEOUT 300)
# prism-propagate --source muon:... and --gensteps end to end on a
# detector made by prism-gen-detector (host backend).
if(TARGET prism-propagate AND TARGET prism-gen-detector)
  prism_test(NAME gensteps_tool SOURCES test_gensteps_tool.c exec_util.c
    LIBRARIES prism_tool_support
    ENVIRONMENT "PRISM_PROPAGATE=$<TARGET_FILE:prism-propagate>;PRISM_GEN_DETECTOR=$<TARGET_FILE:prism-gen-detector>"
    TIMEOUT 120)
  add_dependencies(test_gensteps_tool prism-propagate prism-gen-detector)
endif()
