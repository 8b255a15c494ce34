// Experiment YAML reader (apps/sweep.cpp load_experiment) and the expansion
// into sweep points. The scratch directory holds the input as e.yaml and a
// small trace t.json, so `traces: [t.json]` resolves.
#include <cstdint>
#include <filesystem>

#include "apps/sweep.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dvfsim;
  static const bool ready = [] {
    std::filesystem::copy_file(DVFSIM_SOURCE_DIR "/tests/traces/data/mini_optimizer.json",
                               fuzz::scratch_dir() / "t.json",
                               std::filesystem::copy_options::overwrite_existing);
    return true;
  }();
  (void)ready;
  const std::string p = fuzz::write_scratch("e.yaml", fuzz::as_text(data, size));
  fuzz::input_errors_only([&] {
    const Experiment e = load_experiment(p);
    for (const SweepPoint& pt : expand_experiment(e))
      fuzz::check(!pt.id.empty() && pt.trace != nullptr, "sweep point without id or trace");
  });
  return 0;
}
