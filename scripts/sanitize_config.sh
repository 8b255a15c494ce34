# The clang ASan + UBSan + libFuzzer-coverage configuration, sourced by
# scripts/test.sh --sanitize and scripts/fuzz.sh: one tree (build-asan/ in CI)
# serves both only while they configure it identically.
export CC=clang CXX=clang++
SANITIZE_CMAKE_ARGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DDVFSIM_FUZZ=ON -DDVFSIM_BUILD_BENCH=OFF)
