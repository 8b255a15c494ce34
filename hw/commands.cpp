#include "hw/commands.h"

#include "hw/subcommands.h"

namespace dvfsim::hw {

void add_commands(CLI::App& hw, int& exit_code) {
  hw.require_subcommand(1);
  add_info_command(hw, exit_code);
  add_measure_command(hw, exit_code);
  add_apply_command(hw, exit_code);
  add_switch_latency_command(hw, exit_code);
}

}  // namespace dvfsim::hw
