#!/usr/bin/env bash
# A short smoke of each libFuzzer harness (clang, ASan + UBSan; built by
# fuzz/build.sh, run by fuzz/run.sh): a few thousand inputs mutated from
# the seeds of the COLLADA loader (assets/, the test fixtures, two
# generated detectors), of the .npy reader and of prism-propagate's
# command line. CI runs `bash fuzz/smoke.sh`; keep it well under 2 minutes.
#   FUZZ_RUNS (default 10000)   FUZZ_OUT (default a temporary folder)
#   CLANG (default clang-14, else clang)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${FUZZ_RUNS:-10000}
export FUZZ_OUT=${FUZZ_OUT:-$(mktemp -d /tmp/prism-fuzz.XXXXXX)}

# the time limits stop a slow machine, not the run: -runs does
bash "$root/fuzz/run.sh" collada 100 -runs="$runs" -max_len=8192
echo "fuzz smoke: $runs runs, no crash (work in $FUZZ_OUT)"
bash "$root/fuzz/run.sh" npy 30 -runs="$runs" -max_len=1024
echo "fuzz smoke (.npy): $runs runs, no crash"
bash "$root/fuzz/run.sh" options 20 -runs="$runs"
echo "fuzz smoke (options): $runs runs, no crash"
