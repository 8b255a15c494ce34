#pragma once
// Output files: atomic single files (sim/files.h), buffered output streams
// that write a run's files in bounded memory, CSV quoting, fingerprints.
#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "sim/files.h"  // write_file_atomic, read_file

namespace dvfsim {

// Creates the directory (and parents); InputError when impossible.
void make_output_dir(const std::string& dir);
// CSV field quoting: quotes fields with commas, quotes or newlines.
std::string csv_field(std::string_view s);
// SHA-256-free content fingerprint (FNV-1a 64) of a file, hex; "" if unreadable.
std::string file_fingerprint(const std::string& path);

// A value that writes its own text, at most kMaxChars characters
// (`to` points at that much room), for OutputSink::format and fmt.
template <class T>
concept WritesItself = requires(const T& x, char* to) {
  { x.write(to) } -> std::same_as<char*>;
  { T::kMaxChars } -> std::convertible_to<std::size_t>;
};

// The most characters a double writes with a precision of at most 17 ("-",
// 309 digits, ".", 17 digits).
constexpr std::size_t kMaxNumberChars = 330;

// A number as printf's "%.<decimals>f" (Fixed) or "%.<digits>g"
// (Significant): exactly rounded, the text of fmt's "{:.3f}" and "{:.9g}"
// (from the scaled value's integer digits when they are provably the exactly
// rounded ones, else std::to_chars: several times faster than fmt on a run's
// powers and energies). Precisions at most 17.
struct Fixed {
  static constexpr std::size_t kMaxChars = kMaxNumberChars;
  double value;
  int decimals;
  char* write(char* to) const;
};
struct Significant {
  static constexpr std::size_t kMaxChars = kMaxNumberChars;
  double value;
  int digits;
  char* write(char* to) const;
};

// Writes n / scale, then (decimals > 0) '.' and the last `decimals` digits of
// n, zero-padded: a value rounded to n x 10^-decimals, scale = 10^decimals.
// Returns the end. The sign is the caller's.
char* write_scaled_digits(char* to, std::uint64_t n, std::uint64_t scale, int decimals);

// Where an output is formatted: a buffer that writers append to and that
// drains whenever it holds more than kChunkBytes (call `row_done()` after
// each record), so a file of any size is written in bounded memory.
// Records go in with format(): fmt writes them through a plain pointer into
// room made beforehand, instead of appending piece by piece (`it()`, for
// anything else, appends).
class OutputSink {
 public:
  static constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
  virtual ~OutputSink() = default;
  OutputSink() = default;
  OutputSink(const OutputSink&) = delete;
  OutputSink& operator=(const OutputSink&) = delete;

  fmt::appender it() { return fmt::appender(buf_); }
  void write(std::string_view s) { std::memcpy(grow(s.size()), s.data(), s.size()); }
  void put(char c) { *grow(1) = c; }
  // One record: `format` is a compiled format (FMT_COMPILE) without widths
  // wider than the numbers, of integers, doubles, strings and types that
  // write themselves (Fixed, Significant). Room for the most they can
  // write is made first; fmt then writes through a plain pointer.
  template <class S, class... A>
  void format(const S& format, const A&... args) {
    const std::size_t at = buf_.size();
    buf_.resize(at + fmt::string_view(format).size() + (max_chars(args) + ... + 0));
    char* const end = fmt::format_to(buf_.data() + at, format, args...);
    buf_.resize(static_cast<std::size_t>(end - buf_.data()));
  }
  void row_done() {
    if (buf_.size() >= kChunkBytes) drain(buf_);
  }

 protected:
  // Takes what the buffer holds (and clears it), or keeps it (a string).
  virtual void drain(fmt::memory_buffer& buf) = 0;
  fmt::memory_buffer buf_;

 private:
  // `n` more bytes at the end of the buffer: where they start.
  char* grow(std::size_t n) {
    const std::size_t at = buf_.size();
    buf_.resize(at + n);
    return buf_.data() + at;
  }
  template <class T>
  static constexpr std::size_t max_chars(T) requires(std::is_integral_v<T> &&
                                                     !std::is_same_v<T, bool> &&
                                                     !std::is_same_v<T, char>) {
    return std::numeric_limits<T>::digits10 + 3;  // a sign and the partial digit
  }
  static constexpr std::size_t max_chars(double) { return kMaxNumberChars; }
  static std::size_t max_chars(std::string_view s) { return s.size(); }
  template <WritesItself T>
  static constexpr std::size_t max_chars(const T&) {
    return T::kMaxChars;
  }
};

// A sink that keeps everything: the whole text as one string.
class StringSink final : public OutputSink {
 public:
  std::string str() const { return fmt::to_string(buf_); }

 private:
  void drain(fmt::memory_buffer&) override {}
};

// A sink writing to "PATH.tmp.PID" beside PATH. close() flushes and closes
// it without syncing; commit() renames it over PATH. A file destroyed before
// its commit removes its temporary. RunFileSet syncs a run's files once.
class FileSink final : public OutputSink {
 public:
  explicit FileSink(std::string path);
  ~FileSink() override;
  void close();
  void commit();
  const std::string& path() const { return path_; }

 private:
  void drain(fmt::memory_buffer& buf) override;
  std::string path_, temp_;
  int fd_ = -1;
  bool committed_ = false;
};

// Flushes every file written in `dir`'s file system to disk (syncfs): the one
// sync of a run's outputs, between writing their temporaries and renaming
// them. Throws InputError naming `dir`.
void sync_file_system(const std::string& dir);

}  // namespace dvfsim

template <dvfsim::WritesItself T>
struct fmt::formatter<T> {
  constexpr auto parse(format_parse_context& ctx) { return ctx.begin(); }
  template <class Context>
  auto format(const T& x, Context& ctx) const {
    if constexpr (std::is_same_v<decltype(ctx.out()), char*>) {
      return x.write(ctx.out());  // OutputSink::format: room made for kMaxChars
    } else {
      char text[T::kMaxChars];
      return std::copy(text, x.write(text), ctx.out());
    }
  }
};
