#pragma once
// `dvfsim diff RUN_A RUN_B`: two run directories (`dvfsim run --out`, or a
// sweep's runs/<id>/) of the same trace compared per kernel class, per phase
// and per distinct kernel: time, energy and the clocks they ran at
// (docs/design.md, "Command line").
#include <CLI/CLI.hpp>
#include <cstddef>
#include <iosfwd>
#include <string>

namespace dvfsim {

struct DiffOptions {
  std::string a, b;
  std::string csv;        // also write every row (all kernels) here
  std::size_t rows = 15;  // kernels shown in the text
};

// The text report; InputError naming the file and column when a directory
// lacks a run's files or the two runs replay different traces.
void run_diff(const DiffOptions& o, std::ostream& out);

void add_diff(CLI::App& app, int& exit_code);

}  // namespace dvfsim
