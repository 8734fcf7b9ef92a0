# prism-gen-detector: the synthetic G4DAE-style detector for tests and
# benchmarks. It is a plain writer, so it links nothing of Prism (only libm).
add_executable(prism-gen-detector ${CMAKE_CURRENT_LIST_DIR}/gen_detector.c)
target_link_libraries(prism-gen-detector PRIVATE prism_warnings m)
install(TARGETS prism-gen-detector RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
