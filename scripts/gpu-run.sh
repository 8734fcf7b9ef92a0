#!/usr/bin/env bash
# On the GPU test machine (see ../shared/gpu/README.md): build with CUDA, then
# run the stages named on the command line, each logging to $OUT/<stage>.log
# and printing its key lines. Stages: tests (gpu-labelled ctest), host (the
# rest of ctest), sanitize (compute-sanitizer memcheck/racecheck on the gpu
# suites), bench (every prism-bench stage on the 2.5M-triangle detector),
# view (prism-view --headless --bench, VBO against copy mode).
set -uo pipefail
out=${OUT:-out/gpu}
mkdir -p "$out"
source .gpu/setup.sh > "$out/setup.log" 2>&1
b=build-gpu
if ! { cmake -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DPRISM_CUDA=ON && cmake --build $b -j16; } \
     > "$out/build.log" 2>&1; then
  grep -E "error|FAILED" "$out/build.log" | head -30
  echo "gpu-run: build failed"
  exit 1
fi
echo "gpu-run: built ($(grep -c 'warning' "$out/build.log") warnings)"
det=/tmp/detector-20000.dae
detector() { [ -f $det ] || $b/tools/prism-gen-detector --pmts 20000 -o $det; }

for stage in "$@"; do
  log="$out/$stage.log"
  case $stage in
  tests)
    ctest --test-dir $b -L gpu --output-on-failure -V > "$log" 2>&1
    grep -E "^[0-9]+/[0-9]+ Test|tests passed|FAILED|\*\*\*" "$log" ;;
  host)
    ctest --test-dir $b -LE gpu -j16 --output-on-failure > "$log" 2>&1
    grep -E "tests passed|FAILED|\*\*\*" "$log" ;;
  sanitize)
    for t in memory_gpu render_gpu propagate_gpu; do
      for tool in memcheck racecheck; do
        [ -x $b/tests/test_$t ] || continue
        (cd $b/tests && PRISM_TEST_SMALL=1 timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 \
           ./test_$t) > /tmp/san.txt 2>&1
        echo "compute-sanitizer $tool test_$t: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1)"
        grep -E "^========= (Invalid|Error|Race|.*hazard)" /tmp/san.txt | head -5
      done
    done > "$log"
    cat "$log" ;;
  bench)
    detector
    { $b/tools/prism-info --devices
      $b/tools/prism-info $det
      for s in load bvh upload render propagate; do
        echo "== prism-bench $s"; $b/tools/prism-bench $s $det
      done; } > "$log" 2>&1
    cat "$log" ;;
  view)
    detector
    { for n in 1000000 10000000; do
        for m in vbo copy; do
          echo "== prism-view --headless --bench --photons $n --mode $m"
          $b/viewer/prism-view --headless --bench --size 1920x1080 --frames 60 --photons $n --mode $m $det
        done
      done
      $b/viewer/prism-view --headless --size 1920x1080 --view raytrace --screenshot "$out/raytrace.png" $det
    } > "$log" 2>&1
    cat "$log" ;;
  *) echo "gpu-run: unknown stage $stage" ;;
  esac
done
