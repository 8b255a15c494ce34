#pragma once
// Capture metadata of a trace: which GPU model, and at which clocks it ran.
#include <string>
#include <string_view>

#include "sim/workload.h"

namespace dvfsim {

// Maps the driver's device name ("NVIDIA H200") to a dvfsim device model name
// ("h200") through the device files' `nvml_names`; "" when unknown.
std::string device_model_from_name(std::string_view device_name);

// Sets capture.device: `override_name_or_path` (--capture-device) when not
// empty, checked by loading it; else the device file whose nvml_names holds
// capture.device_name; else "" (unknown GPU).
void resolve_capture_device(CaptureInfo& capture, const std::string& override_name_or_path);

// Strips ".gz", ".json" and ".kineto" (each when present, in that order) from
// a trace path: the stem its sibling files (<stem>.measured.json,
// <stem>.nvml_samples.csv) share.
std::string trace_stem(std::string_view trace_path);

// Fills capture.core_mhz / memory_mhz / clocks_source from the files next to
// the trace, in this order of preference:
//  1. <stem>.measured.json with "mean_sm_mhz" (and optional "mean_mem_mhz");
//  2. <stem>.nvml_samples.csv (columns t, sm_MHz, mem_MHz): the time-weighted
//     mean over measured.json steps[0].t0..t1, each sample holding until the
//     next one;
//  3. nothing: clocks stay 0 and clocks_source is "none" (the caller then uses
//     the device's default clocks).
// Malformed sibling files are bad input: InputError naming the file.
void load_capture_clocks(const std::string& trace_path, CaptureInfo& capture);

}  // namespace dvfsim
