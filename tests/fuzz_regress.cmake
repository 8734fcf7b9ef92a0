# The fuzzers' findings (fuzz/README.md): each input a harness failed on,
# kept under tests/data (collada/fuzz_*.dae, npy/fuzz_*.npy,
# options/fuzz_*.txt), replayed through the harness itself, built in with
# its libFuzzer entry point renamed; and each fix said exactly.
if(TARGET prism_tool_support)
  set(prism_fuzz_dir ${PROJECT_SOURCE_DIR}/fuzz)
  prism_test(NAME fuzz_regress SOURCES test_fuzz_regress.c
    ${prism_fuzz_dir}/fuzz_collada.c ${prism_fuzz_dir}/fuzz_npy.c ${prism_fuzz_dir}/fuzz_options.c
    ${PROJECT_SOURCE_DIR}/tools/propagate_options.c
    LIBRARIES prism_tool_support prism_static TIMEOUT 60) # cli.c calls into prism_static
  foreach(harness collada npy options)
    set_source_files_properties(${prism_fuzz_dir}/fuzz_${harness}.c PROPERTIES
      COMPILE_DEFINITIONS LLVMFuzzerTestOneInput=fuzz_${harness}_one)
  endforeach()
endif()
