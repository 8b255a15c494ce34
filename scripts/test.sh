#!/usr/bin/env bash
# Builds and runs every test. With --sanitize: a separate AddressSanitizer +
# UndefinedBehaviorSanitizer build with clang (build-asan/) runs the same
# tests; it is also the libFuzzer build (-DDVFSIM_FUZZ=ON), so that
# `scripts/fuzz.sh SECONDS build-asan` reuses it instead of compiling again.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${1:-}" = "--sanitize" ]; then
  source scripts/sanitize_config.sh
  bash scripts/build.sh build-asan "${SANITIZE_CMAKE_ARGS[@]}"
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  ctest --test-dir build-asan --output-on-failure -j "$(nproc)"
  exit 0
fi
bash scripts/build.sh build
ctest --test-dir build --output-on-failure -j "$(nproc)"
# The device tables in docs/devices.md must match models/devices/*.yaml.
/usr/bin/python3 scripts/device_tables.py --check
# The H100 calibration rows carry the H200's instruction counts per launch
# (h100-sxm.yaml is their fit: docs/calibration.md).
/usr/bin/python3 validation/h100/calib/instructions.py --check
# The notebooks must be what notebooks/make_notebooks.py writes, and the
# committed figure PDFs must have no Type 3 fonts (a venue's check).
/usr/bin/python3 notebooks/make_notebooks.py --check
bash scripts/check_figures.sh notebooks/figures
# Format check: the tree must match .clang-format.
files=$(git ls-files '*.cpp' '*.h' '*.cc' 2>/dev/null || true)
if [ -n "$files" ]; then
  clang-format --dry-run --Werror $files
fi
