# prism-bench upload FILE: GB/s per transfer path (pageable, pinned, pinned
# chunked staged, mapped write-combined), upload time per placement
# policy, kernel read bandwidth from device and mapped memory.
target_sources(prism-bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bench_upload.c)
target_compile_definitions(prism-bench PRIVATE PRISM_BENCH_UPLOAD)
