#pragma once
// The `dvfsim hw` command family: info, measure, apply.
//
// apps/dvfsim calls add_commands() on its `hw` subcommand. Each subcommand's
// callback does its work, prints errors itself ("dvfsim hw <cmd>: error: ...") and
// stores the process exit code in `exit_code`:
//   0       success (info)
//   N       measure/apply: the command's own exit status (128 + signal if killed)
//   2       dvfsim's error: no NVML, an NVML call failed, bad plan, missing flag
//   127     the command could not be started
#include <CLI/CLI.hpp>

namespace dvfsim::hw {

void add_commands(CLI::App& hw, int& exit_code);

}  // namespace dvfsim::hw
