"""ctest's entry to one pytest file of the Python package (tests/python.cmake).

Exits 77 (ctest's "skipped") when NumPy or pytest is missing, or when every
test of the file skipped (the gpu suite without a CUDA device); otherwise
pytest's exit status. No cache or bytecode is written into the source tree.
"""
import sys

sys.dont_write_bytecode = True
try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print("skipped: %s (Debian: python3-numpy python3-pytest)" % e)
    sys.exit(77)


class Outcomes:
    def __init__(self):
        self.passed = self.skipped = self.failed = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed:
            self.passed += 1
        elif report.skipped:
            self.skipped += 1
        elif report.failed:
            self.failed += 1


outcomes = Outcomes()
status = pytest.main(["-q", "-rs", "-p", "no:cacheprovider"] + sys.argv[1:], plugins=[outcomes])
if status == 0 and outcomes.passed == 0 and outcomes.skipped > 0:
    sys.exit(77)
sys.exit(int(status))
