# The BVH suite: builder invariants, CPU queries against brute force, edge
# cases, watertightness (bvh_test_util.c holds the soups and the reference).
prism_test(NAME bvh SOURCES test_bvh.c bvh_test_util.c TIMEOUT 600)
