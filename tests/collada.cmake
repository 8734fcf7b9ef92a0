# The COLLADA loader: fixtures in tests/data/collada, every bad-input case.
prism_test(NAME collada SOURCES test_collada.c TIMEOUT 120)
prism_test(NAME collada_bad SOURCES test_collada_bad.c TIMEOUT 120)
