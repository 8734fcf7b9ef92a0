# The two commands of the README: `make run` and `make test`. Each checks
# what it needs (scripts/deps.sh: `make run` only what running needs, `make
# test` the test peers too), installs the missing Debian packages, configures,
# builds, then runs. Both share one build folder; `make run` leaves the test
# suites out of it.
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
# ctest under a virtual X server where there is no display (CI); looked up
# when a recipe runs, after deps may have installed xvfb.
XRUN = $(if $(DISPLAY),,$(if $(shell command -v xvfb-run),xvfb-run -a --server-args='-screen 0 1280x1024x24'))

# The Python the package's tests run under (one with NumPy and pytest).
PYTHON     ?= $(shell scripts/deps.sh --python)
RUN_CONFIG  = -DPRISM_BUILD_TESTS=OFF -DPRISM_BUILD_PYTHON=OFF
TEST_CONFIG = -DPRISM_BUILD_TESTS=ON -DPRISM_BUILD_PYTHON=ON -DPython3_EXECUTABLE=$(PYTHON)
configure = cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(1) $(CMAKE_ARGS)

.PHONY: all deps deps-run build run test test-sanitize test-tsan clean

all: build

deps:
	@PYTHON=$(PYTHON) scripts/deps.sh test

deps-run:
	@scripts/deps.sh run

# Everything, the test suites included.
build: deps
	$(call configure,$(TEST_CONFIG))
	cmake --build $(BUILD) -j $(JOBS)

run: deps-run
	$(call configure,$(RUN_CONFIG))
	cmake --build $(BUILD) -j $(JOBS)
	@scripts/run.sh $(BUILD)

test: build
	cd $(BUILD) && $(XRUN) ctest --output-on-failure -j $(JOBS)

# The same suites built with AddressSanitizer and UndefinedBehaviorSanitizer
# (host code; the CUDA backend is left out of this configuration; the Python
# suites run with ASan's runtime preloaded, tests/python.cmake).
test-sanitize: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPRISM_CUDA=OFF \
	  -DPRISM_SANITIZE=address,undefined $(TEST_CONFIG) $(CMAKE_ARGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  $(XRUN) ctest --output-on-failure -j $(JOBS)

# Contexts on several threads at once (tests/test_threads.c) under
# ThreadSanitizer: the library and that one suite, host backend, CUDA off.
# OMP_NUM_THREADS=1: GCC's libgomp is not built with TSan, so TSan cannot
# see its fork, barrier and critical-section synchronisation and reports
# the shared data of every OpenMP region (thousands of reports a run, each
# with an OpenMP worker on one side, none between the test's own threads).
# Suppressing them by function would also hide a real race that crosses
# such a region. With one OpenMP thread each region runs on the thread
# that calls it: every line of the library still runs under TSan, on the
# test's threads, and libgomp starts no thread of its own.
test-tsan: deps
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPRISM_CUDA=OFF \
	  -DPRISM_SANITIZE=thread -DPRISM_BUILD_TESTS=ON -DPRISM_BUILD_PYTHON=OFF \
	  -DPRISM_BUILD_TOOLS=OFF -DPRISM_BUILD_VIEWER=OFF $(CMAKE_ARGS)
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target test_threads
	cd $(TSAN_BUILD) && OMP_NUM_THREADS=1 TSAN_OPTIONS=second_deadlock_stack=1 \
	  ctest -R '^threads$$' --output-on-failure

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) out
