#include "apps/shard.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <numeric>

#include "apps/files.h"
#include "sim/error.h"

namespace dvfsim {
namespace fs = std::filesystem;

ShardSpec parse_shard(const std::string& text) {
  auto fail = [&] {
    throw InputError(fmt::format(
        "--shard '{}': expected K/N with 1 <= K <= N (the K-th of N parts, e.g. 2/8)", text));
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) fail();
  auto number = [&](const std::string& s) {
    if (s.empty() || s.size() > 9 ||
        !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
      fail();
    return static_cast<std::size_t>(std::stoul(s));
  };
  ShardSpec s;
  s.k = number(text.substr(0, slash));
  s.n = number(text.substr(slash + 1));
  if (s.k < 1 || s.k > s.n) fail();
  return s;
}

std::vector<std::size_t> assign_shards(const std::vector<std::string>& ids, std::size_t n) {
  std::vector<std::size_t> order(ids.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return ids[a] < ids[b]; });
  std::vector<std::size_t> shard(ids.size(), 0);
  for (std::size_t p = 0; p < order.size(); ++p) shard[order[p]] = p % n + 1;
  return shard;
}

namespace {

// A word for /bin/sh: single-quoted unless plainly safe.
std::string sh_quote(const std::string& s) {
  const bool safe = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
           c == '.' || c == '_' || c == '-' || c == '=' || c == ':' || c == ',' || c == '+' ||
           c == '@' || c == '%';
  });
  if (safe) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// 1,2,3,5,7,8 -> "1-3,5,7-8"
std::string array_list(const std::vector<std::size_t>& tasks) {
  std::string out;
  for (std::size_t i = 0; i < tasks.size();) {
    std::size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
    out += (out.empty() ? "" : ",") +
           (j == i ? fmt::format("{}", tasks[i]) : fmt::format("{}-{}", tasks[i], tasks[j]));
    i = j + 1;
  }
  return out;
}

// Slurm expands %j, %A, %a ... in --output: a literal % is %%.
std::string slurm_path(const std::string& p) {
  std::string out;
  for (char c : p) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

// Runs a shell command, returns its stdout; InputError when it fails.
std::string run_command(const std::string& cmd) {
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) throw InputError(fmt::format("--slurm: cannot run '{}'", cmd));
  std::string out;
  char buf[4096];
  std::size_t got = 0;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, got);
  const int st = pclose(f);
  if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
    throw InputError(fmt::format("--slurm: '{}' failed (exit status {}){}", cmd,
                                 st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                                 out.empty() ? "" : ": " + out));
  return out;
}

// "123" or "123;cluster" (sbatch --parsable) -> "123".
std::string job_id(const std::string& parsable, const std::string& cmd) {
  std::string id = parsable.substr(0, parsable.find_first_of(";\n"));
  if (id.empty() || !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw InputError(fmt::format("--slurm: '{}' printed no job id (got '{}')", cmd, parsable));
  return id;
}

}  // namespace

int submit_slurm(const SlurmOptions& opts, const std::vector<std::string>& ids,
                 const std::vector<bool>& complete) {
  if (ids.empty()) throw InputError(fmt::format("{}: the experiment has no runs", opts.experiment));
  for (const auto& o : opts.sbatch_options)
    if (o.empty() || o[0] != '-' || o.find('\n') != std::string::npos)
      throw InputError(
          fmt::format("--sbatch-option '{}': expected one sbatch option such as --partition=gpu or "
                      "--time=2:00:00",
                      o));
  const std::size_t max_tasks = 1000;  // under Slurm's default MaxArraySize (1001)
  std::size_t n = opts.array_size ? opts.array_size : std::min(ids.size(), max_tasks);
  if (n > ids.size()) {
    std::cerr << fmt::format(
        "dvfsim sweep: note: --array-size {} is more than the {} runs; using {}\n", n, ids.size(),
        ids.size());
    n = ids.size();
  }
  const auto shard = assign_shards(ids, n);
  std::vector<std::size_t> per_task(n + 1, 0);
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (!complete[i]) ++per_task[shard[i]];
  std::vector<std::size_t> tasks;
  std::size_t missing = 0;
  for (std::size_t k = 1; k <= n; ++k)
    if (per_task[k] > 0) {
      tasks.push_back(k);
      missing += per_task[k];
    }

  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  const fs::path out = fs::absolute(opts.out, ec).lexically_normal();
  const fs::path sdir = out / "slurm";
  const std::string dvfsim = "dvfsim";  // on the compute nodes' PATH (docs/experiments.md)
  const std::string job = "dvfsim-" + opts.name;
  auto header = [&](const std::string& what) {
    std::string s = "#!/bin/bash\n";
    s += fmt::format("# Written by `dvfsim sweep --slurm` for {} ({}).\n", opts.experiment, what);
    s += "# Needs: the same paths on every node (a shared file system) and dvfsim on PATH.\n";
    return s;
  };
  auto options = [&] {
    std::string s;
    for (const auto& o : opts.sbatch_options) s += "#SBATCH " + o + "\n";
    return s;
  };
  const std::string body_cd = fmt::format("set -eu\ncd {}\n", sh_quote(cwd.string()));

  std::string array = header(fmt::format("array task K runs shard K/{}", n));
  array += fmt::format("#SBATCH --job-name={}\n", sh_quote(job));
  array += fmt::format("#SBATCH --array={}\n", array_list(tasks));
  array += "#SBATCH --cpus-per-task=1\n";
  array +=
      fmt::format("#SBATCH --output={}\n", sh_quote(slurm_path(sdir.string()) + "/task-%A_%a.out"));
  array += options();
  array += body_cd;
  array += fmt::format(
      "exec {} sweep {} --out {} --shard \"${{SLURM_ARRAY_TASK_ID}}/{}\" "
      "--jobs \"${{SLURM_CPUS_PER_TASK:-1}}\" --no-progress{}\n",
      dvfsim, sh_quote(opts.experiment), sh_quote(opts.out), n,
      opts.full_outputs ? " --full-outputs" : "");

  std::string merge = header("the merge job, after the array");
  merge += fmt::format("#SBATCH --job-name={}\n", sh_quote(job + "-merge"));
  merge +=
      fmt::format("#SBATCH --output={}\n", sh_quote(slurm_path(sdir.string()) + "/merge-%j.out"));
  merge += options();
  merge += body_cd;
  merge += fmt::format("exec {} sweep {} --out {} --merge{}\n", dvfsim, sh_quote(opts.experiment),
                       sh_quote(opts.out), opts.full_outputs ? " --full-outputs" : "");

  const std::string array_path = (sdir / "sweep.sbatch").string();
  const std::string merge_path = (sdir / "merge.sbatch").string();
  const std::string sub_array = "sbatch --parsable " + sh_quote(array_path);
  const std::string sub_merge_fmt =
      "sbatch --parsable --dependency=afterany:{} " + sh_quote(merge_path);
  const std::string status = fmt::format("{} runs, {} incomplete; {} of {} array tasks to run",
                                         ids.size(), missing, tasks.size(), n);
  if (opts.dry_run) {
    std::cout << fmt::format("# {}: {}\n", opts.name, status);
    if (!tasks.empty()) {
      std::cout << fmt::format("# {}\n{}\n", array_path, array);
      std::cout << fmt::format("# {}\n{}\n", merge_path, merge);
      std::cout << fmt::format("# submit:\n{}\n{}\n", sub_array,
                               fmt::format(fmt::runtime(sub_merge_fmt), "ARRAY_JOB_ID"));
    } else {
      std::cout << fmt::format("# {}\n{}\n# submit:\nsbatch --parsable {}\n", merge_path, merge,
                               sh_quote(merge_path));
    }
    return 0;
  }

  if (run_command("command -v sbatch >/dev/null 2>&1 && echo yes || true").empty())
    throw InputError(
        "--slurm: sbatch is not on PATH (run on a Slurm submit host; docs/experiments.md)");
  make_output_dir(sdir.string());
  write_file_atomic(array_path, array);
  write_file_atomic(merge_path, merge);
  std::string array_id;
  if (!tasks.empty()) {
    array_id = job_id(run_command(sub_array), sub_array);
    std::cerr << fmt::format("dvfsim sweep: submitted array job {} ({}; tasks {}): {}\n", array_id,
                             status, array_list(tasks), array_path);
  } else {
    std::cerr << fmt::format("dvfsim sweep: {}: all {} runs are complete; only the merge job\n",
                             opts.name, ids.size());
  }
  const std::string sub_merge = array_id.empty()
                                    ? "sbatch --parsable " + sh_quote(merge_path)
                                    : fmt::format(fmt::runtime(sub_merge_fmt), array_id);
  const std::string merge_id = job_id(run_command(sub_merge), sub_merge);
  std::cerr << fmt::format("dvfsim sweep: submitted merge job {}{}: writes {}; logs in {}\n",
                           merge_id, array_id.empty() ? "" : " (after " + array_id + ")",
                           (out / "results.csv").string(), sdir.string());
  return 0;
}

}  // namespace dvfsim
