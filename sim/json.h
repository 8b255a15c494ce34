#pragma once
// JSON output shared by apps/ and hw/ (the project's JSON library, simdjson,
// only parses): string quoting, and a minimal streaming writer for the output
// files. Numbers are written with enough digits to round-trip; non-finite
// numbers become null.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dvfsim {

// `s` as a JSON string literal, quotes included.
inline std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<int>(static_cast<unsigned char>(ch)));
        else
          out += ch;
    }
  }
  out += '"';
  return out;
}

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = true) : pretty_(pretty) {}

  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }
  JsonWriter& key(std::string_view k) {
    separator();
    string_literal(k);
    out_ += pretty_ ? ": " : ":";
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(std::string_view s) {
    return raw_value([&] { string_literal(s); });
  }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b) {
    return raw_value([&] { out_ += b ? "true" : "false"; });
  }
  JsonWriter& value(double d) {
    return raw_value([&] { out_ += std::isfinite(d) ? fmt::format("{}", d) : "null"; });
  }
  JsonWriter& value(std::int64_t i) {
    return raw_value([&] { out_ += fmt::format("{}", i); });
  }
  JsonWriter& value(std::int32_t i) { return value(static_cast<std::int64_t>(i)); }
  JsonWriter& value(std::uint64_t i) {
    return raw_value([&] { out_ += fmt::format("{}", i); });
  }
  JsonWriter& null() {
    return raw_value([&] { out_ += "null"; });
  }
  template <class T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  const std::string& str() const { return out_; }

 private:
  template <class F>
  JsonWriter& raw_value(F f) {
    if (!after_key_) separator();
    after_key_ = false;
    f();
    return *this;
  }
  JsonWriter& open(char c) {
    if (!after_key_) separator();
    after_key_ = false;
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    const bool empty = first_.back();
    first_.pop_back();
    if (pretty_ && !empty) newline();
    out_ += c;
    return *this;
  }
  void separator() {
    if (first_.empty()) return;
    if (!first_.back()) out_ += ',';
    first_.back() = false;
    if (pretty_) newline();
  }
  void newline() {
    out_ += '\n';
    out_.append(2 * first_.size(), ' ');
  }
  void string_literal(std::string_view s) { out_ += json_quote(s); }

  bool pretty_;
  bool after_key_ = false;
  std::vector<bool> first_;
  std::string out_;
};

}  // namespace dvfsim
