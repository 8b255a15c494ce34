// Kineto JSON reader (traces/kineto.cpp), then the checks of trace_checks.h.
// The path names no directory that exists, so no sibling file is read.
#include <cstdint>

#include "tests/fuzz/trace_checks.h"
#include "traces/kineto.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dvfsim;
  fuzz::input_errors_only([&] {
    const Workload w = parse_kineto(fuzz::as_text(data, size), "/nonexistent/fuzz.json");
    fuzz::check_workload(w);
  });
  return 0;
}
