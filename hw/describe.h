#pragma once
// Human-readable descriptions of NVML quantities: clock lists and clock-event
// reason bit masks.
#include <string>
#include <vector>

namespace dvfsim::hw {

// Compresses a clock list into ranges, e.g. "345–1980 MHz step 15 (110 values)"
// or "2201, 3201 MHz (2 values)". Arithmetic runs of three or more values become
// "first–last step s"; the input need not be sorted; duplicates are dropped.
std::string describe_clock_list(std::vector<unsigned> mhz);

// Names of the set bits of an NVML clock-event (throttle) reason mask, e.g.
// "GpuIdle|SwPowerCap"; "none" for 0; unknown bits as hex.
std::string clock_event_reason_names(unsigned long long bits);

// "0x5 (GpuIdle, SwPowerCap)".
std::string describe_clock_event_reasons(unsigned long long bits);

}  // namespace dvfsim::hw
