// dvfsim: the command-line program. Parses, wires, prints; the work happens in
// the libraries (docs/design.md, "Command line").
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "sim/error.h"

int main(int argc, char** argv) {
  CLI::App app{
      "dvfsim: replay GPU kernel traces against calibrated power and latency models "
      "under pluggable DVFS policies"};
  app.require_subcommand(1);
  app.set_version_flag("--version", DVFSIM_VERSION);
  int exit_code = 0;
  dvfsim::add_commands(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const dvfsim::InputError& e) {
    std::cerr << "dvfsim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dvfsim: internal error: " << e.what() << "\n";
    return 1;
  }
  return exit_code;
}
