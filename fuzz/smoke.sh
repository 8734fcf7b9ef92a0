#!/usr/bin/env bash
# Build the COLLADA loader's libFuzzer harness (clang, ASan + UBSan) and run
# a short smoke: a few thousand inputs mutated from assets/ and the test
# fixtures. CI runs `bash fuzz/smoke.sh`; keep it well under 2 minutes.
#   FUZZ_RUNS (default 10000)   FUZZ_OUT (default a temporary folder)
#   CLANG (default clang-14, else clang)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${FUZZ_RUNS:-10000}
out=${FUZZ_OUT:-$(mktemp -d /tmp/prism-fuzz.XXXXXX)}
cc=${CLANG:-$(command -v clang-14 || command -v clang)}
mkdir -p "$out/corpus" "$out/seeds"

# Seeds: every small COLLADA file we ship or test with.
for f in "$root"/assets/*.dae "$root"/tests/data/collada/*.dae; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 65536 ] && cp "$f" "$out/seeds/"
done

sources=("$root"/geometry/scene.c "$root"/geometry/collada_*.c "$root"/geometry/fast_float.c)
"$cc" -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -I"$root/include" -I"$root/geometry" \
    "$root/fuzz/fuzz_collada.c" "${sources[@]}" -lexpat -lm -o "$out/fuzz_collada"

"$out/fuzz_collada" -runs="$runs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
    -max_total_time=100 -artifact_prefix="$out/" -dict="$root/fuzz/collada.dict" -print_final_stats=1 \
    "$out/corpus" "$out/seeds" 2>&1 | tail -n 15
echo "fuzz smoke: $runs runs, no crash (work in $out)"
