#!/usr/bin/env bash
# Build the COLLADA loader's libFuzzer harness (clang, ASan + UBSan) and run
# a short smoke: a few thousand inputs mutated from assets/ and the test
# fixtures; then the .npy reader's, from a few hand-made files. CI runs
# `bash fuzz/smoke.sh`; keep it well under 2 minutes.
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

sources=("$root"/geometry/scene.c "$root"/geometry/collada/*.c "$root"/geometry/fast_float.c
         "$root"/geometry/big_alloc.c)
# as geometry/CMakeLists.txt finds it: expat's reparse deferral, which the
# chunked parse switches off
defs=()
if printf '#include <expat.h>\nint main(void){return XML_SetReparseDeferralEnabled(0, 0);}\n' |
    "$cc" -x c - -lexpat -o "$out/deferral_check" 2>/dev/null; then
    defs+=(-DPRISM_HAVE_XML_REPARSE_DEFERRAL)
fi
"$cc" -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -I"$root/include" -I"$root" "${defs[@]}" \
    "$root/fuzz/fuzz_collada.c" "${sources[@]}" -lexpat -lm -o "$out/fuzz_collada"

"$out/fuzz_collada" -runs="$runs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
    -max_total_time=100 -artifact_prefix="$out/" -dict="$root/fuzz/collada.dict" -print_final_stats=1 \
    "$out/corpus" "$out/seeds" 2>&1 | tail -n 15
echo "fuzz smoke: $runs runs, no crash (work in $out)"

# The .npy reader (tools/npy.c): seeds of each header version, a Fortran
# order and a truncated file.
mkdir -p "$out/npy_corpus" "$out/npy_seeds"
npy_seed() { # name version dict data-bytes: the header padded as NumPy pads it
    local pre=$(( $2 == 1 ? 10 : 12 ))
    local len=$(( (pre + ${#3} + 1 + 63) / 64 * 64 - pre ))
    { printf '\223NUMPY'; printf "\\$(printf %03o "$2")\\000"
      printf "\\$(printf %03o $((len & 255)))\\$(printf %03o $((len >> 8)))"
      [ "$2" = 1 ] || printf '\000\000'
      printf '%-*s\n' $((len - 1)) "$3"; head -c "$4" /dev/zero; } > "$out/npy_seeds/$1"
}
npy_seed v1.npy 1 "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4, 4), }" 64
npy_seed v2.npy 2 "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4, 4), }" 128
npy_seed f.npy 3 "{'shape': (1, 4, 4), 'fortran_order': True, 'descr': '<f4'}" 64
npy_seed cut.npy 1 "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4, 4), }" 10
"$cc" -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -I"$root/tools" "$root/fuzz/fuzz_npy.c" "$root/tools/npy.c" -o "$out/fuzz_npy"
"$out/fuzz_npy" -runs="$runs" -max_len=1024 -timeout=10 -max_total_time=30 \
    -artifact_prefix="$out/npy-" -print_final_stats=1 "$out/npy_corpus" "$out/npy_seeds" 2>&1 |
    tail -n 5
echo "fuzz smoke (.npy): $runs runs, no crash"
