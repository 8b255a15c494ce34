// Clock plan reader (hw/plan.cpp): parse, validate, and the round trip
// format -> parse -> format.
#include <cstdint>

#include "hw/plan.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dvfsim;
  fuzz::input_errors_only([&] {
    const hw::ClockPlan plan =
        hw::parse_clock_plan(std::string(fuzz::as_text(data, size)), "fuzz.plan.json");
    const std::string text = hw::format_clock_plan(plan);
    hw::ClockPlan back;
    try {
      back = hw::parse_clock_plan(text, "round-trip");
    } catch (const InputError& e) {
      fuzz::fail(std::string("clock plan round trip refused its own output: ") + e.what());
    }
    fuzz::check(hw::format_clock_plan(back) == text, "clock plan round trip changed the plan");
  });
  return 0;
}
