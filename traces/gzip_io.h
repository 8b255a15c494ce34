#pragma once
// Gzip input and output for traces. Reading a whole file, gzip or not, is the
// one read_file of sim/files.h (it inflates by magic bytes); GzipInput reads a
// large trace piece by piece instead, so its text is never held whole.
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/files.h"

namespace dvfsim::traces {

// Writes `data` to `path` atomically (temporary file in the same directory,
// then rename), gzip-compressed when `gzip` is true. Throws InputError.
void write_file_atomic(const std::string& path, std::string_view data, bool gzip);

// A file read in pieces, inflated on the fly when it starts with the gzip
// magic bytes (concatenated members included): the same bytes and the same
// errors as read_file ("PATH: truncated gzip stream", "PATH: corrupt gzip
// stream: ...", "PATH: not a regular file (...)"), in bounded memory.
class GzipInput {
 public:
  explicit GzipInput(const std::string& path);
  ~GzipInput();
  GzipInput(const GzipInput&) = delete;
  GzipInput& operator=(const GzipInput&) = delete;

  // Up to `n` bytes of the (inflated) content into `out`; 0 at its end.
  // Throws InputError on a read error or a corrupt or truncated stream.
  std::size_t read(char* out, std::size_t n);

 private:
  bool refill();  // more raw bytes; false at the end of the file

  struct Inflater;
  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<unsigned char> raw_;
  std::size_t raw_at_ = 0, raw_end_ = 0;
  bool eof_ = false, done_ = false;
  std::unique_ptr<Inflater> z_;  // null for a plain file
};

}  // namespace dvfsim::traces
