// Measurement readers: `*.measured.json` (apps/validate.cpp read_measured, and
// the capture clocks of traces/capture_info.cpp with its `.nvml_samples.csv`)
// and the calibration measurement CSV (models/calibrate.cpp). The first byte
// picks the reader; for the capture clocks the rest is split at the first
// line "--" into measured.json and nvml_samples.csv. Whatever is accepted must
// be finite and in range.
#include <cmath>
#include <cstdint>

#include "apps/validate.h"
#include "models/calibrate.h"
#include "tests/fuzz/fuzz_util.h"
#include "traces/capture_info.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dvfsim;
  if (size == 0) return 0;
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      const std::string p = fuzz::write_scratch("m.measured.json", text);
      fuzz::input_errors_only([&] {
        const MeasuredStep m = read_measured(p);
        fuzz::check(std::isfinite(m.time_per_step_s) && m.time_per_step_s > 0 &&
                        std::isfinite(m.energy_per_step_j) && m.energy_per_step_j > 0 &&
                        std::isfinite(m.mean_power_w) && m.mean_power_w > 0,
                    "measured step not finite and > 0");
      });
      break;
    }
    case 1: {
      const std::size_t cut = text.find("\n--\n");
      fuzz::write_scratch("c.measured.json", text.substr(0, cut));
      if (cut == std::string_view::npos)
        fuzz::remove_scratch("c.nvml_samples.csv");
      else
        fuzz::write_scratch("c.nvml_samples.csv", text.substr(cut + 4));
      fuzz::input_errors_only([&] {
        CaptureInfo capture;
        load_capture_clocks((fuzz::scratch_dir() / "c.kineto.json").string(), capture);
        fuzz::check(capture.core_mhz >= 0 && capture.core_mhz <= 100000 &&
                        capture.memory_mhz >= 0 && capture.memory_mhz <= 100000,
                    "capture clocks outside 0..100000 MHz");
      });
      break;
    }
    default: {
      const std::string p = fuzz::write_scratch("cal.csv", text);
      fuzz::input_errors_only([&] {
        for (const CalibrationRow& r : read_calibration_csv(p))
          fuzz::check(std::isfinite(r.core_mhz) && std::isfinite(r.memory_mhz) &&
                          std::isfinite(r.window_s) && std::isfinite(r.busy_s) &&
                          std::isfinite(r.energy_j) && std::isfinite(r.mean_power_w) &&
                          std::isfinite(r.flops) && std::isfinite(r.dram_bytes) &&
                          std::isfinite(r.instructions),
                      "calibration row not finite");
      });
    }
  }
  return 0;
}
