#pragma once
// Errors that the command line turns into a message and an exit code.
#include <stdexcept>
#include <string>

namespace dvfsim {

// Bad input from the user: a malformed trace, bad YAML, an impossible clock, an
// unknown name. The message names the file, line or field. Exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dvfsim
