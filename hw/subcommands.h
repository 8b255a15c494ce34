#pragma once
// Registration of each hw subcommand (used by add_commands).
#include <CLI/CLI.hpp>

namespace dvfsim::hw {

void add_info_command(CLI::App& hw, int& exit_code);
void add_measure_command(CLI::App& hw, int& exit_code);
void add_apply_command(CLI::App& hw, int& exit_code);
void add_switch_latency_command(CLI::App& hw, int& exit_code);

}  // namespace dvfsim::hw
