// dvfsim_hw_testdriver: behaves like `dvfsim hw ...` (a CLI::App with an `hw`
// subcommand that add_commands fills in), so the hw tests can run it as a process.
#include <CLI/CLI.hpp>

#include "hw/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"dvfsim hw test driver"};
  app.require_subcommand(1);
  CLI::App* hw = app.add_subcommand("hw", "Measure and control real GPUs through NVML");
  int exit_code = 0;
  dvfsim::hw::add_commands(*hw, exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
