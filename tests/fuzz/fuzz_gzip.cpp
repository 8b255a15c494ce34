// Whole-file reading with gzip detection (sim/files.cpp): a gzip input
// inflates or is refused; what it inflates to compresses and reads back the same.
#include <cstdint>

#include "tests/fuzz/fuzz_util.h"
#include "traces/gzip_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dvfsim;
  const std::string in = fuzz::write_scratch("in", fuzz::as_text(data, size));
  fuzz::input_errors_only([&] {
    const std::string text = read_file(in, 64);
    fuzz::check(text.capacity() >= text.size() + 64, "padding missing");
    if (!is_gzip(fuzz::as_text(data, size)))
      fuzz::check(text == fuzz::as_text(data, size), "plain file changed by reading");
    const std::string out = (fuzz::scratch_dir() / "out.gz").string();
    traces::write_file_atomic(out, text, true);
    fuzz::check(read_file(out) == text, "gzip round trip changed the data");
  });
  return 0;
}
