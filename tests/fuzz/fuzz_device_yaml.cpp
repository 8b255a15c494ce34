// Device YAML reader (models/device_yaml.cpp). There is no writer (the YAML
// is hand-written; calibrate rewrites numbers in place), so no round trip.
#include <cstdint>

#include "models/device_yaml.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dvfsim;
  fuzz::input_errors_only(
      [&] { (void)load_device_yaml(std::string(fuzz::as_text(data, size)), "fuzz.yaml"); });
  return 0;
}
