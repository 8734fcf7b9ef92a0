# Contexts on several threads at once: each thread's load, upload, render
# and propagation equal a single thread's (test_threads.c). `make
# test-tsan` runs it under ThreadSanitizer, with one OpenMP thread (the
# Makefile says why).
prism_test(NAME threads SOURCES test_threads.c LIBRARIES Threads::Threads)
