#!/usr/bin/env bash
# Fuzz one harness for a while:
#   fuzz/run.sh TARGET SECONDS [extra libFuzzer args]
# TARGET: collada (the COLLADA loader, serial against chunked), npy (the
# .npy reader) or options (prism-propagate's command line). Builds it with
# fuzz/build.sh, runs it as one process (no -jobs, -workers or -fork) for
# SECONDS with its dictionary (fuzz/TARGET.dict) and the seeds build.sh
# makes, then prints executions, coverage (cov, ft), the corpus and the
# findings. Extra arguments come last and win (-runs=N, -max_len=N, ...).
#   FUZZ_OUT (default a temporary folder): bin/ the build and seeds,
#     corpus/TARGET/ the corpus (kept: a second run goes on from it),
#     TARGET.log libFuzzer's output, TARGET-crash-* etc. the findings.
#   CLANG (default clang-14, else clang)
# Exit status: libFuzzer's (0, or non-zero with a finding).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: fuzz/run.sh collada|npy|options SECONDS [libFuzzer args]"
target=${1:?$usage}
seconds=${2:?$usage}
shift 2
case $target in
collada) limits=(-max_len=65536 -rss_limit_mb=2048) ;;
npy) limits=(-max_len=4096) ;;
options) limits=(-max_len=1024) ;;
*) echo "$usage" >&2; exit 2 ;;
esac
out=${FUZZ_OUT:-$(mktemp -d /tmp/prism-fuzz.XXXXXX)}
mkdir -p "$out/corpus/$target"
out=$(cd "$out" && pwd)
corpus=$out/corpus/$target
log=$out/$target.log

"$root/fuzz/build.sh" "$out/bin" "$target"

args=("${limits[@]}" -timeout=10 -max_total_time="$seconds" -print_final_stats=1
      -artifact_prefix="$out/$target-")
[ -f "$root/fuzz/$target.dict" ] && args+=(-dict="$root/fuzz/$target.dict")
set +e
start=$SECONDS
"$out/bin/fuzz_$target" "${args[@]}" "$@" "$corpus" "$out/bin/seeds/$target" > "$log" 2>&1
rc=$?
took=$((SECONDS - start))
set -e

# The summary: libFuzzer's last status line and final stats, the corpus on
# disk, the artifacts this run left.
last=$(grep -E '^#[0-9]+[[:space:]].*cov: ' "$log" | tail -n 1 || true)
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
[ -n "$execs" ] || execs=$(sed -n "s/^#\([0-9]*\)[[:space:]].*/\1/p" <<< "$last")
field() { sed -n "s/.* $1: \\([^ ]*\\).*/\\1/p" <<< "$last"; }
files=$(find "$corpus" -type f | wc -l)
bytes=$(du -sb "$corpus" | cut -f1)
findings=$(find "$out" -maxdepth 1 -name "$target-*" -newer "$out/bin/fuzz_$target" -type f \
    -printf '%p\n' | sort)
if [ "$rc" -ne 0 ]; then
    echo "--- the end of $log:"
    tail -n 40 "$log"
else
    echo "$last"
    grep '^stat::' "$log" || true
fi
echo "fuzz run $target: ${execs:-?} executions in $took s (rc $rc): cov $(field cov)," \
     "ft $(field ft), corp $(field corp)"
echo "corpus: $files files, $bytes bytes in $corpus"
if [ -n "$findings" ]; then
    echo "findings:"
    sed 's/^/  /' <<< "$findings"
else
    echo "findings: none"
fi
exit "$rc"
