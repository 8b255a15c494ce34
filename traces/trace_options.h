#pragma once
// What the user tells a trace reader that the trace does not say itself.
#include <cstdint>
#include <string>

namespace dvfsim {

struct TraceOptions {
  // --gpu N: read the activities of device N of a file holding several;
  // -1: the file must hold one device's.
  std::int32_t gpu = -1;
  // --iterations N: the trace holds N iterations (split at the longest host
  // pauses); 0: found from markers or the repeated activity sequence.
  std::int32_t iterations = 0;
  // --capture-device NAME|FILE: the GPU the trace was captured on; "": from
  // the driver's device name in the trace (the device files' nvml_names).
  std::string capture_device;
  // Parsed-trace cache (traces/trace.h, read_trace): the directory that holds
  // Kineto traces converted to the native format; "": no cache. The CLI sets
  // default_trace_cache_dir() unless --no-cache.
  std::string cache_dir;

  // A string that differs between options that read a file differently.
  std::string key() const {
    return std::to_string(gpu) + "|" + std::to_string(iterations) + "|" + capture_device;
  }
};

}  // namespace dvfsim
