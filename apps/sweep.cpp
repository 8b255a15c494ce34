#include "apps/sweep.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "apps/cli_values.h"
#include "apps/files.h"
#include "apps/output_dir.h"
#include "apps/outputs.h"
#include "apps/parallel_run.h"
#include "apps/results_table.h"
#include "apps/runner.h"
#include "apps/shard.h"
#include "policies/planning/kernel_plan.h"
#include "sim/error.h"
#include "sim/json.h"
#include "traces/trace.h"

#ifndef DVFSIM_VERSION
#define DVFSIM_VERSION "0.0.0"
#endif

namespace dvfsim {
namespace fs = std::filesystem;
namespace {

// ---------------------------------------------------------------------------
// Running

struct Progress {
  std::size_t total = 0;
  std::atomic<std::size_t> done{0}, skipped{0}, failed{0};
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  std::mutex m;
  std::condition_variable cv;
  bool stop = false;

  static std::string clock(double s) {
    const auto t = static_cast<long>(s + 0.5);
    return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                     : fmt::format("{}:{:02}", t / 60, t % 60);
  }
  std::string line() const {
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::size_t d = done, sk = skipped, f = failed;
    const std::size_t ran = d - sk;
    std::string eta = "--:--";
    if (ran > 0 && d < total)
      eta = clock(el / static_cast<double>(ran) * static_cast<double>(total - d));
    if (d == total) eta = "0:00";
    const std::size_t width = 24;
    const std::size_t fill = total ? d * width / total : width;
    return fmt::format("[{}{}] {}/{} runs ({} skipped, {} failed)  elapsed {}  ETA {}",
                       std::string(fill, '#'), std::string(width - fill, '.'), d, total, sk, f,
                       clock(el), eta);
  }
};

}  // namespace

int run_sweep(const std::string& experiment_path, const SweepOptions& opts) {
  const Experiment e = load_experiment(experiment_path);
  const std::vector<SweepPoint> points = expand_experiment(e);
  const fs::path out(opts.out);
  const fs::path runs_dir = out / "runs";

  // Input fingerprints, part of each run's configuration key.
  std::map<std::string, std::string> trace_fp, device_fp;
  for (const auto& t : e.traces) trace_fp[t.label] = file_fingerprint(t.path);
  for (const auto& d : e.devices)
    device_fp[d] = file_fingerprint(load_device_cached(d)->device.source_path);
  // The capture device's file shapes every retargeted run, and the program
  // itself shapes every run: a rebuilt dvfsim re-runs the sweep.
  for (const auto& t : e.traces) {
    const std::string& cap = load_workload(t.path)->capture.device;
    if (!cap.empty())
      trace_fp[t.label] += "+" + file_fingerprint(load_device_cached(cap)->device.source_path);
  }
  const std::string build_fp = file_fingerprint("/proc/self/exe");

  auto config_key = [&](const SweepPoint& p) {
    JsonWriter j;
    j.begin_object();
    j.field("dvfsim_version", DVFSIM_VERSION);
    j.field("dvfsim_build", build_fp);
    j.field("trace", p.trace->label);
    j.field("trace_hash", trace_fp[p.trace->label]);
    j.field("device", p.device);
    j.field("device_hash", device_fp[p.device]);
    j.field("policy", p.policy);
    j.key("set").begin_object();
    for (const auto& [k, v] : p.settings) j.field(k, v);
    j.end_object();
    j.field("baseline", p.baseline);
    j.field("seed", static_cast<std::uint64_t>(p.seed));
    j.end_object();
    return j.str() + "\n";
  };
  auto complete = [&](const SweepPoint& p) {
    const fs::path dir = runs_dir / p.id;
    std::error_code ec;
    if (!fs::is_regular_file(dir / "summary.json", ec)) return false;
    if (opts.full_outputs && !fs::is_regular_file(dir / "trace.json", ec)) return false;
    return fs::is_regular_file(dir / "sweep_key.json", ec) &&
           read_file((dir / "sweep_key.json").string()) == config_key(p);
  };

  // A run that failed leaves error.txt (and its key) in its directory.
  auto failure = [&](const SweepPoint& p) -> std::optional<std::string> {
    const fs::path dir = runs_dir / p.id;
    std::error_code ec;
    if (!fs::is_regular_file(dir / "error.txt", ec) ||
        !fs::is_regular_file(dir / "sweep_key.json", ec) ||
        read_file((dir / "sweep_key.json").string()) != config_key(p))
      return std::nullopt;
    return read_file((dir / "error.txt").string());
  };

  if (int(!opts.shard.empty()) + int(opts.merge) + int(opts.slurm) > 1)
    throw InputError("--shard, --merge and --slurm exclude each other: give one of them");
  if (!opts.slurm && (opts.array_size || !opts.sbatch_options.empty()))
    throw InputError("--array-size and --sbatch-option go with --slurm");
  std::vector<std::string> ids;
  for (const auto& p : points) ids.push_back(p.id);
  std::vector<bool> member(points.size(), true);
  ShardSpec shard;
  if (!opts.shard.empty()) {
    shard = parse_shard(opts.shard);
    const auto which = assign_shards(ids, shard.n);
    for (std::size_t i = 0; i < points.size(); ++i) member[i] = which[i] == shard.k;
  }

  if (opts.slurm) {
    std::vector<bool> done(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) done[i] = complete(points[i]);
    SlurmOptions so;
    so.experiment = experiment_path;
    so.out = opts.out;
    so.name = e.name;
    so.array_size = opts.array_size;
    so.sbatch_options = opts.sbatch_options;
    so.full_outputs = opts.full_outputs;
    so.dry_run = opts.dry_run;
    return submit_slurm(so, ids, done);
  }

  if (opts.dry_run) {
    std::cout << fmt::format("{}: {} runs ({} traces, {} devices, {} policies)", e.name,
                             points.size(), e.traces.size(), e.devices.size(), e.policies.size());
    if (shard.active())
      std::cout << fmt::format("; shard {}/{}: {} runs", shard.k, shard.n,
                               std::count(member.begin(), member.end(), true));
    std::cout << "\n";
    for (std::size_t i = 0; i < points.size(); ++i)
      if (member[i])
        std::cout << fmt::format("  {} {}\n", complete(points[i]) ? "done" : "todo", points[i].id);
    return 0;
  }

  // One sweep per output directory: a second one would re-run and overwrite
  // the first one's runs under it and mix two results.csv. Shards of one
  // sweep share the directory by design (each writes only its own runs).
  std::optional<DirectoryLock> out_lock;
  if (!shard.active()) {
    out_lock.emplace(out.string(),
                     fmt::format("dvfsim sweep {} --out {}", experiment_path, opts.out));
    remove_stale_temporaries(out.string());
  }
  // Shards write only their own runs' files: no experiment.yaml, no results.csv.
  make_output_dir(runs_dir.string());
  if (!shard.active())
    write_file_atomic((out / "experiment.yaml").string(), read_file(experiment_path));

  Progress prog;
  prog.total = static_cast<std::size_t>(std::count(member.begin(), member.end(), true));
  std::vector<ResultsRow> rows(points.size());
  std::vector<std::size_t> todo;
  std::vector<std::string> missing, failed_runs;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!member[i]) continue;
    if (complete(points[i])) {
      try {
        rows[i] = summary_row(read_file((runs_dir / points[i].id / "summary.json").string()));
        ++prog.skipped;
        ++prog.done;
        continue;
      } catch (const std::exception&) {
        rows[i] = {};  // unreadable: run it again
      }
    }
    if (opts.merge) {  // nothing runs: the row says why there is no summary
      if (const auto err = failure(points[i])) {
        rows[i] = failed_row(points[i], *err);
        failed_runs.push_back(points[i].id);
      } else {
        rows[i] = missing_row(points[i]);
        missing.push_back(points[i].id);
      }
      continue;
    }
    todo.push_back(i);
  }

  unsigned jobs = opts.jobs ? opts.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, std::max<std::size_t>(todo.size(), 1)));
  const std::string scope =
      shard.active() ? fmt::format("{} shard {}/{}", e.name, shard.k, shard.n) : e.name;
  if (opts.merge)
    std::cerr << fmt::format("dvfsim sweep: {}: merging {} runs ({} complete) in {}\n", e.name,
                             points.size(), prog.skipped.load(), out.string());
  else
    std::cerr << fmt::format(
        "dvfsim sweep: {}: {} runs ({} already complete), {} thread{}, out {}\n", scope, prog.total,
        prog.skipped.load(), jobs, jobs == 1 ? "" : "s", out.string());

  // Load each trace once before the threads start (the loader caches by path).
  {
    std::set<std::string> loaded;
    for (auto i : todo) {
      const std::string& path = points[i].trace->path;
      if (!loaded.insert(path).second) continue;
      const auto t0 = std::chrono::steady_clock::now();
      try {
        load_workload(path);
        std::cerr << fmt::format(
            "dvfsim sweep: loaded {} in {:.1f} s\n", path,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      } catch (const std::exception&) {
        // Reported by each run that needs it.
      }
    }
  }
  prog.t0 = std::chrono::steady_clock::now();

  const bool tty = isatty(fileno(stderr)) != 0;
  std::thread reporter;
  if (opts.progress && !opts.merge) {
    reporter = std::thread([&] {
      std::unique_lock<std::mutex> lock(prog.m);
      const auto period = tty ? std::chrono::milliseconds(250) : std::chrono::milliseconds(5000);
      while (!prog.stop) {
        prog.cv.wait_for(lock, period, [&] { return prog.stop; });
        if (prog.stop) break;
        std::cerr << (tty ? "\r" + prog.line() + "  " : "dvfsim sweep: " + prog.line() + "\n")
                  << std::flush;
      }
    });
  }

  // Work the runs share: prepared models, baseline replays, plans (RunCache).
  RunCache cache;
  std::atomic<std::size_t> next{0};
  std::mutex errors_m;
  auto worker = [&] {
    for (;;) {
      const std::size_t t = next++;
      if (t >= todo.size()) break;
      const std::size_t i = todo[t];
      const SweepPoint& p = points[i];
      const fs::path dir = runs_dir / p.id;
      RunSpec spec;
      spec.trace_path = p.trace->path;
      spec.device = p.device;
      spec.policy = p.policy;
      for (const auto& [k, v] : p.settings) spec.settings[k] = v;
      spec.baseline = p.baseline;
      spec.seed = p.seed;
      spec.record_timeline = opts.full_outputs;
      spec.host_range = true;  // as `run` (its summary.json)
      spec.trace_options.cache_dir = default_trace_cache_dir();
      try {
        std::error_code ec;
        fs::remove_all(dir, ec);  // stale or partial outputs of this id
        make_output_dir(dir.string());
        write_file_atomic((dir / "sweep_key.json").string(), config_key(p));
        // `parallel` (docs/parallel.md) makes the point a pipeline job.
        const auto par = spec.settings.find("parallel");
        if (par != spec.settings.end()) {
          const ParallelSpec ps = parse_parallel(par->second);
          spec.settings.erase(par);
          const Simulation sim = simulate_parallel(spec, ps);
          write_parallel_outputs(dir.string(), spec, sim);
          rows[i] = summary_row(summary_json(spec, sim));
          for (const auto& [k, v] : p.settings) rows[i].set(k, v);
          ++prog.done;
          continue;
        }
        const Simulation sim = simulate(spec, &cache);
        const std::string summary = summary_json(spec, sim);
        // Per-run kernels.csv only when the experiment asks (kernels_csv: true).
        OutputSelection files =
            opts.full_outputs
                ? OutputSelection::all()
                : OutputSelection(OutputSelection::switches | OutputSelection::manifest);
        if (e.kernels_csv) files = files.with(OutputSelection::kernels);
        write_run_outputs(dir.string(), spec, sim, files);  // summary.json last
        rows[i] = summary_row(summary);
      } catch (const std::exception& err) {
        rows[i] = failed_row(p, err.what());
        try {  // for --merge; the run is tried again by the next sweep
          write_file_atomic((dir / "error.txt").string(), rows[i].get("error") + "\n");
        } catch (const std::exception&) {
        }
        ++prog.failed;
        std::lock_guard<std::mutex> lock(errors_m);
        std::cerr << fmt::format("{}dvfsim sweep: run {} failed: {}\n",
                                 tty && opts.progress ? "\r" : "", p.id, rows[i].get("error"));
      }
      ++prog.done;
    }
  };
  std::vector<std::thread> threads;
  for (unsigned k = 0; k < jobs && !todo.empty(); ++k) threads.emplace_back(worker);
  for (auto& th : threads) th.join();
  if (reporter.joinable()) {
    {
      std::lock_guard<std::mutex> lock(prog.m);
      prog.stop = true;
    }
    prog.cv.notify_all();
    reporter.join();
  }
  if (opts.progress && !opts.merge)
    std::cerr << (tty ? "\r" + prog.line() + "  \n" : "dvfsim sweep: " + prog.line() + "\n");

  if (shard.active()) {
    const double el =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - prog.t0).count();
    std::cerr << fmt::format(
        "dvfsim sweep: {}: {} runs: {} ran, {} skipped (already complete), {} failed in {:.1f} s; "
        "`--merge` writes results.csv\n",
        scope, prog.total, prog.total - prog.skipped - prog.failed, prog.skipped.load(),
        prog.failed.load(), el);
    return prog.failed > 0 ? 1 : 0;
  }

  const std::string csv = results_csv(e, points, rows);
  write_file_atomic((out / "results.csv").string(), csv);

  if (opts.merge) {
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (std::size_t i = 0; i < v.size() && i < 20; ++i) s += "\n  " + v[i];
      if (v.size() > 20) s += fmt::format("\n  ... and {} more", v.size() - 20);
      return s;
    };
    std::cerr << fmt::format(
        "dvfsim sweep: {}: merged {} runs: {} complete, {} missing, {} failed; wrote {}\n", e.name,
        points.size(), prog.skipped.load(), missing.size(), failed_runs.size(),
        (out / "results.csv").string());
    if (!missing.empty())
      std::cerr << fmt::format("dvfsim sweep: missing runs (not run, or killed):{}\n",
                               list(missing));
    if (!failed_runs.empty())
      std::cerr << fmt::format("dvfsim sweep: failed runs (see their error column):{}\n",
                               list(failed_runs));
    if (!missing.empty() || !failed_runs.empty())
      std::cerr << "dvfsim sweep: run the sweep again (the same --shard, --slurm or plain "
                   "command) to complete them\n";
    return missing.empty() && failed_runs.empty() ? 0 : 1;
  }

  const double el =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - prog.t0).count();
  std::cerr << fmt::format(
      "dvfsim sweep: {}: {} runs: {} ran, {} skipped (already complete), {} failed; "
      "wrote {} in {:.1f} s\n",
      e.name, points.size(), points.size() - prog.skipped - prog.failed, prog.skipped.load(),
      prog.failed.load(), (out / "results.csv").string(), el);
  if (!todo.empty())
    std::cerr << fmt::format(
        "dvfsim sweep: shared work: {} baseline replays for {} runs with a baseline; {} plans "
        "computed, {} reused\n",
        cache.baseline_replays(), cache.baseline_replays() + cache.baseline_hits(),
        cache.plans().misses(), cache.plans().hits());
  return prog.failed > 0 ? 1 : 0;
}

void add_sweep(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "sweep",
      "Run an experiment file (traces x devices x policies x parameters) in parallel, resumably");
  struct Opts {
    std::string experiment;
    SweepOptions o;
    bool no_progress = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("EXPERIMENT", o->experiment, "Experiment YAML file (docs/experiments.md)")
      ->required();
  cmd->add_option("--out", o->o.out, "Output directory (results.csv, runs/<id>/)")->required();
  cmd->add_option("--jobs,-j", o->o.jobs, "Parallel runs (default: hardware concurrency)")
      ->check(unsigned_in(0, 1024));
  cmd->add_flag("--full-outputs", o->o.full_outputs,
                "Also write timeline.csv and trace.json per run (slower, larger)");
  cmd->add_flag("--no-progress", o->no_progress, "No progress line on stderr");
  cmd->add_flag("--dry-run", o->o.dry_run,
                "List the runs (and which are complete) without running");
  cmd->add_option("--shard", o->o.shard,
                  "Run only the K-th of N disjoint parts of the runs (K/N, e.g. 2/8); "
                  "writes no results.csv (see --merge)");
  cmd->add_flag("--merge", o->o.merge,
                "Run nothing: write results.csv from DIR/runs/, naming missing and failed runs");
  cmd->add_flag("--slurm", o->o.slurm,
                "Submit a Slurm array job (task K runs --shard K/N) and a dependent merge job; "
                "with --dry-run, print the scripts");
  cmd->add_option("--array-size", o->o.array_size,
                  "With --slurm: number of array tasks N (default: one per run, at most 1000)")
      ->check(CLI::PositiveNumber);
  cmd->add_option(
         "--sbatch-option", o->o.sbatch_options,
         "With --slurm: an sbatch option for both jobs, e.g. --sbatch-option=--time=1:00:00 "
         "(repeatable)")
      ->allow_extra_args(false);
  cmd->callback([o, &exit_code] {
    o->o.progress = !o->no_progress;
    exit_code = run_sweep(o->experiment, o->o);
  });
}

}  // namespace dvfsim
