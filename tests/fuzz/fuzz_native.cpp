// Native trace reader (traces/native.cpp), then the checks of trace_checks.h.
#include <cstdint>

#include "tests/fuzz/trace_checks.h"
#include "traces/native.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dvfsim;
  fuzz::input_errors_only([&] {
    const Workload w = parse_native(fuzz::as_text(data, size), "fuzz.trace");
    fuzz::check_workload(w);
  });
  return 0;
}
