// dvfsim: the command-line program. Parses, wires, prints; the work happens in
// the libraries (docs/design.md, "Command line").
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "sim/error.h"

#ifndef DVFSIM_COMMIT
#define DVFSIM_COMMIT "unknown"
#endif
#ifndef DVFSIM_BUILD_TYPE
#define DVFSIM_BUILD_TYPE "unknown"
#endif

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// " (did you mean 'X'?)" for the closest of `known`, when it is close enough.
std::string suggestion(const std::string& given, const std::vector<std::string>& known) {
  std::optional<std::string> best;
  std::size_t best_d = 0;
  for (const std::string& k : known) {
    const std::size_t d = edit_distance(given, k);
    if (!best || d < best_d) {
      best = k;
      best_d = d;
    }
  }
  if (best && best_d <= std::max<std::size_t>(2, given.size() / 3))
    return fmt::format(" (did you mean '{}'?)", *best);
  return "";
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string command_path(const CLI::App* app) {
  std::string path;
  for (const CLI::App* a = app; a && a->get_parent(); a = a->get_parent())
    path = a->get_name() + (path.empty() ? "" : " " + path);
  return path.empty() ? "dvfsim" : "dvfsim " + path;
}

// Names unknown subcommands and options before CLI11 parses (it would report
// "A subcommand is required" or a missing required option instead), with the
// closest known name. Empty when every name is known.
std::string unknown_name(const CLI::App& app, int argc, char** argv) {
  const CLI::App* cur = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() > 1 && arg[0] == '-' && !(arg[1] >= '0' && arg[1] <= '9') && arg[1] != '.') {
      const std::string name = arg.substr(0, arg.find('='));
      const CLI::Option* opt = cur->get_option_no_throw(name);
      if (!opt && cur == &app && name == "--version") continue;
      if (!opt) {
        std::vector<std::string> known;
        for (const CLI::Option* o : cur->get_options()) {
          for (const auto& l : o->get_lnames()) known.push_back("--" + l);
          for (const auto& s : o->get_snames()) known.push_back("-" + s);
        }
        return fmt::format("{}: unknown option '{}'{}; see {} --help", command_path(cur), name,
                           suggestion(name, known), command_path(cur));
      }
      // Skip the option's value unless it came with '='.
      if (arg.find('=') == std::string::npos && opt->get_items_expected_max() > 0 && i + 1 < argc)
        ++i;
      continue;
    }
    const std::vector<const CLI::App*> subs =
        cur->get_subcommands([](const CLI::App*) { return true; });
    if (subs.empty()) continue;  // a positional argument of this command
    const auto it = std::find_if(subs.begin(), subs.end(),
                                 [&](const CLI::App* s) { return s->check_name(arg); });
    if (it != subs.end()) {
      cur = *it;
      continue;
    }
    std::vector<std::string> names;
    for (const CLI::App* s : subs) names.push_back(s->get_name());
    return fmt::format("{}: unknown command '{}'{}; commands: {}", command_path(cur), arg,
                       suggestion(arg, names), joined(names));
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "dvfsim: replay GPU kernel traces against calibrated power and latency models "
      "under pluggable DVFS policies"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("dvfsim {} (commit {}, {} build)", DVFSIM_VERSION,
                                                DVFSIM_COMMIT, DVFSIM_BUILD_TYPE));
  int exit_code = 0;
  dvfsim::add_commands(app, exit_code);
  if (const std::string unknown = unknown_name(app, argc, argv); !unknown.empty()) {
    std::cerr << "dvfsim: error: " << unknown << "\n";
    return 2;
  }
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
