#include "traces/trace.h"

#include <fmt/format.h>
#include <simdjson.h>

#include "sim/error.h"
#include "traces/capture_info.h"
#include "traces/gzip_io.h"
#include "traces/kineto.h"
#include "traces/native.h"

namespace dvfsim {
namespace {

TraceFormat format_of(std::string_view text) {
  if (text.substr(0, 14) == "# dvfsim-trace") return TraceFormat::native;
  std::size_t i = 0;
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
    ++i;
  if (i < text.size() && (text[i] == '{' || text[i] == '[')) return TraceFormat::kineto;
  return TraceFormat::unknown;
}

// A native trace records its iterations and its one GPU; the capture
// device can still be overridden.
Workload with_options(Workload w, const TraceOptions& options) {
  if (!options.capture_device.empty()) resolve_capture_device(w.capture, options.capture_device);
  return w;
}

}  // namespace

TraceFormat detect_trace_format(const std::string& path) {
  return format_of(read_file(path));
}

Workload read_trace(const std::string& path, const TraceOptions& options) {
  const std::string text = read_file(path, simdjson::SIMDJSON_PADDING);
  switch (format_of(text)) {
    case TraceFormat::native:
      return with_options(parse_native(text, path), options);
    case TraceFormat::kineto:
      return parse_kineto(text, path, text.capacity() >= text.size() + simdjson::SIMDJSON_PADDING,
                          options);
    case TraceFormat::unknown:
      break;
  }
  if (text.substr(0, 15) == "SQLite format 3")
    throw InputError(fmt::format("{}: Nsight Systems SQLite traces are not supported yet", path));
  throw InputError(
      fmt::format("{}: unknown trace format (expected a '{}' native trace or Kineto JSON)", path,
                  "# dvfsim-trace v2"));
}

}  // namespace dvfsim
