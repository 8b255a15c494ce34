// Nsight Compute sidecar reader (traces/instructions.cpp), matched against the
// kernels of a small Kineto trace from the tests: every kernel ends with a
// finite instruction count >= 0.
#include <cmath>
#include <cstdint>

#include "tests/fuzz/fuzz_util.h"
#include "traces/instructions.h"
#include "traces/kineto.h"

namespace {
const dvfsim::Workload& base() {
  static const dvfsim::Workload w =
      dvfsim::read_kineto(DVFSIM_SOURCE_DIR "/tests/traces/data/mini_optimizer.json");
  return w;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dvfsim;
  Workload w = base();
  fuzz::input_errors_only([&] {
    annotate_instructions_from_text(w, fuzz::as_text(data, size), "fuzz.ncu.csv");
    for (const Kernel& k : w.kernels)
      fuzz::check(std::isfinite(k.work.instructions) && k.work.instructions >= 0,
                  "instruction count not a finite number >= 0");
  });
  return 0;
}
