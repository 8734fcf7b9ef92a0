# Geometry upload on the host backend: every policy, budgets, demotion,
# refusals, and the kernels' view read back against the BVH.
prism_test(NAME upload SOURCES test_upload.c)
