#pragma once
#include <CLI/CLI.hpp>

namespace dvfsim {
// Registers every subcommand; the chosen one runs from its callback and sets
// `exit_code`. InputError escapes to main (exit code 2).
void add_commands(CLI::App& app, int& exit_code);
}  // namespace dvfsim
