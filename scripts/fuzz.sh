#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan + UBSan) into
# BUILD_DIR and runs each for SECONDS on one core, starting from the seed
# corpus in tests/fuzz/corpus (copied: the tree is not changed). Fails if any
# target crashes, leaks, times out (> 20 s on one input) or runs out of memory
# (> 2 GB); the input is saved as BUILD_DIR/fuzz-out/TARGET/crash-*.
# Usage: scripts/fuzz.sh [SECONDS per target, default 8] [BUILD_DIR, default build-fuzz] [TARGET...]
# docs/fuzzing.md: the figures of the last long run and how to reproduce a crash.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-8}"
dir="${2:-build-fuzz}"
shift $(( $# < 2 ? $# : 2 ))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(kineto native gzip ncu_sidecar device_yaml experiment clock_plan measurement)
fi
# The same configuration as `scripts/test.sh --sanitize` (build-asan), so that
# reusing that tree compiles nothing again; only the fuzz targets are built.
source scripts/sanitize_config.sh
cmake -S . -B "$dir" "${SANITIZE_CMAKE_ARGS[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
out="$dir/fuzz-out"
failed=0
printf '%-14s %10s %8s %6s %s\n' target executions exec/s cov result
for t in "${targets[@]}"; do
  work="$out/$t"
  rm -rf "$work"
  mkdir -p "$work/corpus"
  cp tests/fuzz/corpus/"$t"/* "$work/corpus/"
  rc=0
  (cd "$work" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "../../tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
       -max_len=65536 -print_final_stats=1 -artifact_prefix="$PWD/" corpus \
       > log.txt 2>&1) || rc=$?
  execs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$work/log.txt" | grep -o '[0-9]*$' || true)
  speed=$(grep -ao 'stat::average_exec_per_sec: *[0-9]*' "$work/log.txt" | grep -o '[0-9]*$' || true)
  cov=$(grep -ao 'cov: [0-9]*' "$work/log.txt" | tail -1 | grep -o '[0-9]*$' || true)
  if [ "$rc" -eq 0 ]; then
    result=ok
  else
    result="FAILED (exit $rc): $(ls "$work" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | head -1)"
    failed=1
  fi
  printf '%-14s %10s %8s %6s %s\n' "$t" "${execs:-?}" "${speed:-?}" "${cov:-?}" "$result"
  if [ "$rc" -ne 0 ]; then tail -40 "$work/log.txt" >&2; fi
done
exit "$failed"
