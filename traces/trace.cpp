#include "traces/trace.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "models/device_yaml.h"
#include "sim/error.h"
#include "traces/capture_info.h"
#include "traces/gzip_io.h"
#include "traces/kineto.h"
#include "traces/native.h"

namespace dvfsim {
namespace {
namespace fs = std::filesystem;

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

// 64-bit hash of a byte string, 32 bytes a step in four lanes (the rounds of
// xxHash64): several GB/s, so a cache hit on a 13 MB trace costs ~2 ms.
std::uint64_t content_hash(const unsigned char* p, std::size_t n) {
  constexpr std::uint64_t P1 = 11400714785074694791ull, P2 = 14029467366897019727ull,
                          P3 = 1609587929392839161ull, P4 = 9650029242287828579ull,
                          P5 = 2870177450012600261ull;
  auto rotl = [](std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
  auto round = [&](std::uint64_t acc, std::uint64_t in) { return rotl(acc + in * P2, 31) * P1; };
  auto load = [](const unsigned char* q) {
    std::uint64_t v;
    std::memcpy(&v, q, 8);
    return v;
  };
  std::uint64_t v1 = P1 + P2, v2 = P2, v3 = 0, v4 = 0 - P1;
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    v1 = round(v1, load(p + i));
    v2 = round(v2, load(p + i + 8));
    v3 = round(v3, load(p + i + 16));
    v4 = round(v4, load(p + i + 24));
  }
  std::uint64_t h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18) + n * P5;
  for (; i + 8 <= n; i += 8) h = rotl(h ^ round(0, load(p + i)), 27) * P1 + P4;
  for (; i < n; ++i) h = rotl(h ^ (p[i] * P5), 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

// The hash of a whole file (mapped, not copied); nullopt when unreadable.
std::optional<std::uint64_t> file_hash(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return content_hash(nullptr, 0);
  }
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return std::nullopt;
  const std::uint64_t h = content_hash(static_cast<const unsigned char*>(m), size);
  ::munmap(m, size);
  return h;
}

// Name, size and modification time: what identifies a file that is not hashed.
std::string stat_key(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return fmt::format("{}:-", p.string());
  return fmt::format("{}:{}:{}.{}", p.string(), static_cast<long long>(st.st_size),
                     static_cast<long long>(st.st_mtim.tv_sec),
                     static_cast<long long>(st.st_mtim.tv_nsec));
}

// The first bytes of a file, inflated when it is gzip (at most `max`).
std::string read_prefix(const std::string& path, unsigned max) {
  require_regular_file(path);
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw InputError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::string out(max, '\0');
  const int n = gzread(f, out.data(), max);
  gzclose(f);
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

Workload parse_any(const std::string& text, const std::string& path, const TraceOptions& options,
                   TraceFormat& format) {
  format = format_of(text);
  switch (format) {
    case TraceFormat::native:
      return with_options(parse_native(text, path), options);
    case TraceFormat::kineto:
      return parse_kineto(text, path, options);
    case TraceFormat::unknown:
      break;
  }
  if (text.substr(0, 15) == "SQLite format 3")
    throw InputError(fmt::format("{}: Nsight Systems SQLite traces are not supported yet", path));
  throw InputError(
      fmt::format("{}: unknown trace format (expected a '{}' native trace or Kineto JSON)", path,
                  kNativeHeader));
}

}  // namespace

TraceFormat detect_trace_format(const std::string& path) {
  // The first 4 KiB (after gunzip) decide; the rest is never read.
  return format_of(read_prefix(path, 4096));
}

std::string default_trace_cache_dir() {
  if (const char* d = std::getenv("DVFSIM_CACHE_DIR"); d && *d) {
    const std::string_view v = d;
    return v == "off" || v == "0" ? std::string() : std::string(v);
  }
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return (fs::path(x) / "dvfsim" / "traces").string();
  if (const char* h = std::getenv("HOME"); h && *h)
    return (fs::path(h) / ".cache" / "dvfsim" / "traces").string();
  return "";
}

// The file holding this reader's code: the executable, or the shared object
// it was linked into (the Python module runs inside python3, whose own file
// says nothing about the reader's build).
namespace {
const char kReaderAnchor = 0;  // an object in this file, for dladdr
std::string reader_binary() {
  Dl_info info{};
  if (dladdr(&kReaderAnchor, &info) != 0 && info.dli_fname && *info.dli_fname)
    return info.dli_fname;
  return "/proc/self/exe";  // the main program (dladdr names it "")
}
}  // namespace

std::string trace_cache_path(const std::string& path, const TraceOptions& options) {
  const auto trace = file_hash(path);
  if (!trace) return "";
  std::string key = fmt::format("dvfsim trace cache {}\n{}\ntrace {:016x}\noptions {}\n",
                                kTraceReaderVersion, kNativeHeader, *trace, options.key());
  // The executable: a rebuilt reader never sees an older build's entries.
  key += stat_key(reader_binary()) + "\n";
  const std::string stem = trace_stem(path);
  for (const char* sibling : {".measured.json", ".nvml_samples.csv", ".ncu.csv", ".ncu.csv.gz"}) {
    const auto h = file_hash(stem + sibling);
    key += h ? fmt::format("{} {:016x}\n", sibling, *h) : fmt::format("{} -\n", sibling);
  }
  // The device files decide the capture device and its peaks (annotation).
  std::vector<std::string> devices;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(device_directory(), ec), end; !ec && it != end;
       it.increment(ec))
    if (it->is_regular_file(ec)) devices.push_back(stat_key(it->path()));
  std::sort(devices.begin(), devices.end());
  for (const std::string& d : devices) key += d + "\n";
  if (!options.capture_device.empty() && fs::is_regular_file(options.capture_device, ec))
    key += stat_key(options.capture_device) + "\n";
  const std::uint64_t h =
      content_hash(reinterpret_cast<const unsigned char*>(key.data()), key.size());
  return (fs::path(options.cache_dir) / fmt::format("{:016x}.dvfsim", h)).string();
}

Workload read_trace(const std::string& path, const TraceOptions& options, TraceFormat* format) {
  TraceFormat local = TraceFormat::unknown;
  TraceFormat& fmt_out = format ? *format : local;
  std::string cached;
  const bool kineto = detect_trace_format(path) == TraceFormat::kineto;
  if (!options.cache_dir.empty() && kineto) {
    cached = trace_cache_path(path, options);
    std::error_code ec;
    if (!cached.empty() && fs::is_regular_file(cached, ec)) {
      try {
        Workload w = parse_native(read_file(cached), cached);
        w.source_path = path;
        fmt_out = TraceFormat::kineto;
        return w;
      } catch (const InputError&) {
        // A damaged entry: read the trace again and replace it below.
      }
    }
  }
  Workload w = kineto ? read_kineto(path, options)  // streamed, never held whole
                      : parse_any(read_file(path), path, options, fmt_out);
  if (kineto) fmt_out = TraceFormat::kineto;
  if (!cached.empty() && fmt_out == TraceFormat::kineto) {
    try {  // best effort: a read-only or full cache directory is skipped
      std::error_code ec;
      fs::create_directories(fs::path(cached).parent_path(), ec);
      write_native(w, cached);
    } catch (const std::exception&) {
    }
  }
  return w;
}

}  // namespace dvfsim
