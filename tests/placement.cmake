# Placement: the pure function, every policy and edge case, host only.
prism_test(NAME placement SOURCES test_placement.c)
