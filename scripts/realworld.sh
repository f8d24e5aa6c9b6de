#!/usr/bin/env bash
# The whole real-world corpus (tests/realworld, issue 13): every variant of
# MANIFEST through the front end, then to cubins for sm_80 and sm_90a, with
# each variant's compile time; prints the failures and the summary. CTest
# runs the front end for every variant but cubins for a sample only (CI's
# time). Then the second, third, fifth, sixth, seventh, eighth, ninth, tenth,
# eleventh, twelfth, thirteenth, fourteenth, fifteenth and sixteenth samples (MANIFEST.second,
# MANIFEST.third, MANIFEST.fifth, MANIFEST.sixth, MANIFEST.seventh, MANIFEST.eighth,
# MANIFEST.ninth, MANIFEST.tenth, MANIFEST.eleventh, MANIFEST.twelfth,
# MANIFEST.thirteenth, MANIFEST.fourteenth, MANIFEST.fifteenth, MANIFEST.sixteenth; CTest
# runs their front end), the same two ways, each against its own
# KNOWN_*FAILURES.<sample> files.
#
#   scripts/realworld.sh [BUILD_DIR]   (default: build; needs its kilnc)
#   JOBS=N   parallel compiles (default: all cores)
#   REPORT=1 rewrite docs/realworld.md from this run (tests/realworld/report.py)
#
# Exits non-zero if a variant fails that KNOWN_*FAILURES does not list, or a
# listed one passes.
set -uo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
kilnc="$build/compiler/driver/kilnc"
jobs="${JOBS:-$(nproc)}"
[[ -x $kilnc ]] || { echo "realworld.sh: no $kilnc; build the kilnc target first" >&2; exit 2; }
out="$build/realworld"
mkdir -p "$out"
status=0
python3 tests/kernels/check_corpus.py --kilnc "$kilnc" --manifest tests/realworld/MANIFEST \
  -j "$jobs" --quiet --times "$out/frontend.tsv" || status=1
python3 tests/kernels/check_corpus.py --kilnc "$kilnc" --manifest tests/realworld/MANIFEST \
  -j "$jobs" --emit cubin --archs sm_80,sm_90a --times "$out/cubin.tsv" \
  > "$out/cubin.log" || status=1
grep -v "^PASS " "$out/cubin.log"
for sample in second third fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth sixteenth; do
  manifest=tests/realworld/MANIFEST.$sample
  [[ -f $manifest ]] || continue
  for emit in kiln cubin; do
    known="tests/realworld/KNOWN_FAILURES.$sample"
    [[ $emit == cubin ]] && known="tests/realworld/KNOWN_BACKEND_FAILURES.$sample"
    if [[ ! -f $known ]]; then : > "$out/empty"; known="$out/empty"; fi
    archs=sm_90a
    [[ $emit == cubin ]] && archs=sm_80,sm_90a
    python3 tests/kernels/check_corpus.py --kilnc "$kilnc" --manifest "$manifest" \
      -j "$jobs" --emit "$emit" --archs "$archs" --known-failures "$known" \
      --times "$out/$sample-$emit.tsv" > "$out/$sample-$emit.log" || status=1
    grep -v "^PASS " "$out/$sample-$emit.log"
  done
done
if [[ ${REPORT:-0} == 1 ]]; then
  python3 tests/realworld/report.py --kiln "$out/frontend.tsv" --cubin "$out/cubin.tsv" \
    --failures "$out/cubin.log" -o docs/realworld.md || status=1
  echo "realworld.sh: wrote docs/realworld.md"
fi
exit $status
