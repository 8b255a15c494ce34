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
#include <set>
#include <thread>

#include "apps/files.h"
#include "apps/outputs.h"
#include "apps/results_table.h"
#include "apps/runner.h"
#include "policies/plan.h"
#include "sim/json.h"

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

  if (opts.dry_run) {
    std::cout << fmt::format("{}: {} runs ({} traces, {} devices, {} policies)\n", e.name,
                             points.size(), e.traces.size(), e.devices.size(), e.policies.size());
    for (const auto& p : points)
      std::cout << fmt::format("  {} {}\n", complete(p) ? "done" : "todo", p.id);
    return 0;
  }

  make_output_dir(runs_dir.string());
  write_file_atomic((out / "experiment.yaml").string(), read_file(experiment_path));

  Progress prog;
  prog.total = points.size();
  std::vector<ResultsRow> rows(points.size());
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < points.size(); ++i) {
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
    todo.push_back(i);
  }

  unsigned jobs = opts.jobs ? opts.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, std::max<std::size_t>(todo.size(), 1)));
  std::cerr << fmt::format("dvfsim sweep: {}: {} runs ({} already complete), {} thread{}, out {}\n",
                           e.name, points.size(), prog.skipped.load(), jobs, jobs == 1 ? "" : "s",
                           out.string());

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
  if (opts.progress) {
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

  std::atomic<std::size_t> next{0};
  std::mutex errors_m;
  auto worker = [&] {
    plan::quiet_reports(true);  // solver lines would interleave with the progress bar
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
      try {
        std::error_code ec;
        fs::remove_all(dir, ec);  // stale or partial outputs of this id
        make_output_dir(dir.string());
        write_file_atomic((dir / "sweep_key.json").string(), config_key(p));
        const Simulation sim = simulate(spec);
        const std::string summary = summary_json(spec, sim);
        if (opts.full_outputs) {
          write_run_outputs(dir.string(), spec, sim);
        } else {
          write_file_atomic((dir / "kernels.csv").string(), kernels_csv(sim));
          write_file_atomic((dir / "clock_switches.csv").string(), clock_switches_csv(sim));
          write_file_atomic((dir / "manifest.json").string(), manifest_json(spec, sim));
          write_file_atomic((dir / "summary.json").string(),
                            summary);  // last: marks the run complete
        }
        rows[i] = summary_row(summary);
      } catch (const std::exception& err) {
        rows[i] = failed_row(p, err.what());
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
  if (opts.progress)
    std::cerr << (tty ? "\r" + prog.line() + "  \n" : "dvfsim sweep: " + prog.line() + "\n");

  const std::string csv = results_csv(e, points, rows);
  write_file_atomic((out / "results.csv").string(), csv);

  const double el =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - prog.t0).count();
  std::cerr << fmt::format(
      "dvfsim sweep: {}: {} runs: {} ran, {} skipped (already complete), {} failed; "
      "wrote {} in {:.1f} s\n",
      e.name, points.size(), points.size() - prog.skipped - prog.failed, prog.skipped.load(),
      prog.failed.load(), (out / "results.csv").string(), el);
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
  cmd->add_option("--jobs,-j", o->o.jobs, "Parallel runs (default: hardware concurrency)");
  cmd->add_flag("--full-outputs", o->o.full_outputs,
                "Also write timeline.csv and trace.json per run (slower, larger)");
  cmd->add_flag("--no-progress", o->no_progress, "No progress line on stderr");
  cmd->add_flag("--dry-run", o->o.dry_run,
                "List the runs (and which are complete) without running");
  cmd->callback([o, &exit_code] {
    o->o.progress = !o->no_progress;
    exit_code = run_sweep(o->experiment, o->o);
  });
}

}  // namespace dvfsim
