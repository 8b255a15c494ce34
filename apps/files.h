#pragma once
// Output files: atomic single files (sim/files.h), buffered output streams
// that write a run's files in bounded memory, CSV quoting, fingerprints.
#include <fmt/format.h>

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>

#include "sim/files.h"  // write_file_atomic, read_file

namespace dvfsim {

// Creates the directory (and parents); InputError when impossible.
void make_output_dir(const std::string& dir);
// CSV field quoting: quotes fields with commas, quotes or newlines.
std::string csv_field(std::string_view s);
// SHA-256-free content fingerprint (FNV-1a 64) of a file, hex; "" if unreadable.
std::string file_fingerprint(const std::string& path);

// Where an output is formatted: a buffer that writers append to
// (`fmt::format_to(out.it(), ...)`) and that drains whenever it holds more
// than kChunkBytes (call `row_done()` after each record), so a file of any
// size is written in bounded memory.
class OutputSink {
 public:
  static constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
  virtual ~OutputSink() = default;
  OutputSink() = default;
  OutputSink(const OutputSink&) = delete;
  OutputSink& operator=(const OutputSink&) = delete;

  fmt::appender it() { return fmt::appender(buf_); }
  void write(std::string_view s) { buf_.append(s.data(), s.data() + s.size()); }
  void put(char c) { buf_.push_back(c); }
  void row_done() {
    if (buf_.size() >= kChunkBytes) drain(buf_);
  }

 protected:
  // Takes what the buffer holds (and clears it), or keeps it (a string).
  virtual void drain(fmt::memory_buffer& buf) = 0;
  fmt::memory_buffer buf_;
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
