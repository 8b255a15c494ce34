#pragma once
// Shared pieces of the libFuzzer targets (docs/fuzzing.md). A target passes
// the input to a reader; an InputError is the expected answer to bad input,
// anything else (another exception, a sanitizer report, a failed round trip
// or check) aborts, which libFuzzer reports as a crash with the input saved.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "sim/error.h"

namespace dvfsim::fuzz {

[[noreturn]] inline void fail(std::string_view what) {
  std::fprintf(stderr, "dvfsim fuzz check failed: %.*s\n", static_cast<int>(what.size()),
               what.data());
  std::abort();
}

inline void check(bool ok, std::string_view what) {
  if (!ok) fail(what);
}

// Runs `f`; InputError is fine, any other exception is a defect (the command
// line would print "internal error").
template <typename F>
void input_errors_only(F&& f) {
  try {
    f();
  } catch (const InputError&) {
  } catch (const std::exception& e) {
    fail(std::string("exception other than InputError: ") + e.what());
  }
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A private directory for this fuzzing process, removed at exit.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "dvfsim-fuzz-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) fail("cannot create a scratch directory");
    static const std::string keep = tmpl;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(keep, ec);
    });
    return std::filesystem::path(tmpl);
  }();
  return dir;
}

// Writes `text` to `name` in the scratch directory; returns the path.
inline std::string write_scratch(const std::string& name, std::string_view text) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) fail("cannot write a scratch file");
  return path;
}

inline void remove_scratch(const std::string& name) {
  std::error_code ec;
  std::filesystem::remove(scratch_dir() / name, ec);
}

}  // namespace dvfsim::fuzz
