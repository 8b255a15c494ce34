#pragma once
// Shared by the trace readers' bad-input tests: the message of the InputError a
// reader throws, and a containment check that prints the whole message.
#include <string>

#include "sim/error.h"

namespace dvfsim {

// Runs `read` and returns the InputError message ("" when nothing was thrown).
template <typename F>
std::string error_of(F read) {
  try {
    read();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace dvfsim

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << text
