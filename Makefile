# The two commands of the README: `make run` and `make test`. Each checks
# what it needs (scripts/deps.sh: `make run` only what running needs, `make
# test` the test peers too), installs the missing Debian packages, configures,
# builds, then runs. Both share one build folder; `make run` leaves the test
# suites out of it.
BUILD      ?= build
ASAN_BUILD ?= build-asan
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

.PHONY: all deps deps-run build run test test-sanitize clean

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

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) out
