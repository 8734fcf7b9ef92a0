# The upload's staged copy on the host backend: every store mode, ring size,
# ramp and thread count copies the bytes exactly; the streaming store helper
# matches memcpy at every alignment.
prism_test(NAME staged_copy SOURCES test_staged_copy.c)
