# Memory: buffer kinds, views, fills, copies, pools, the GL copy path and the
# ledger on the host backend; the same on a GPU (label gpu).
prism_test(NAME memory SOURCES test_memory.c)
