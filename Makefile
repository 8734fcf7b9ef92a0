# The two commands of the README: `make run` and `make test`. Both install
# missing Debian packages (scripts/deps.sh), configure, build, then run.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
# ctest under a virtual X server where there is no display (CI).
XRUN := $(if $(DISPLAY),,$(if $(shell command -v xvfb-run),xvfb-run -a --server-args='-screen 0 1280x1024x24'))

.PHONY: all deps build run test test-sanitize clean

all: build

deps:
	@scripts/deps.sh

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)

run: build
	@scripts/run.sh $(BUILD)

test: build
	cd $(BUILD) && $(XRUN) ctest --output-on-failure -j $(JOBS)

# The same suites built with AddressSanitizer and UndefinedBehaviorSanitizer
# (host code; the CUDA backend is left out of this configuration).
test-sanitize: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPRISM_CUDA=OFF \
	  -DPRISM_SANITIZE=address,undefined $(CMAKE_ARGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  $(XRUN) ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) out
