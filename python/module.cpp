// The `dvfsim` Python module's native part (`dvfsim._dvfsim`): the CLI's own
// functions (apps/runner.h, apps/outputs.h, apps/sweep.h) behind a small
// interface; python/dvfsim/__init__.py turns their tables into pandas
// DataFrames. Every simulation releases the GIL. docs/python.md.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "apps/outputs.h"
#include "apps/reports_json.h"
#include "apps/runner.h"
#include "apps/sweep.h"
#include "apps/validate.h"
#include "models/device_yaml.h"
#include "policies/registry.h"
#include "sim/error.h"
#include "sim/workload.h"
#include "traces/host_overhead.h"

namespace py = pybind11;

namespace dvfsim {
namespace {

struct PyWorkload {
  std::string path;
  TraceOptions options;
  std::string host_overhead;  // as given: "auto", "off" or a factor
  std::shared_ptr<const Workload> workload;
};

struct PyResult {
  RunSpec spec;
  Simulation sim;
};

PyWorkload load_trace(const std::string& path, std::int32_t gpu, std::int32_t iterations,
                      const std::string& capture_device, const std::string& host_overhead) {
  PyWorkload w{path, {}, host_overhead, nullptr};
  w.options.gpu = gpu;
  w.options.iterations = iterations;
  w.options.capture_device = capture_device;
  const HostOverhead host = parse_host_overhead(host_overhead);
  py::gil_scoped_release release;
  w.workload = load_workload(path, w.options, host);
  return w;
}

// The workload's activities as columns (python/dvfsim/__init__.py makes the DataFrame).
py::dict workload_columns(const PyWorkload& pw) {
  const Workload& w = *pw.workload;
  py::list index, iteration, name, op, correlation, cls, phase, stream, host_ns, traced_ns,
      duration, flops, bytes, source, instructions, instructions_source, l2_excess, zeroed;
  for (std::size_t i = 0; i < w.kernels.size(); ++i) {
    const Kernel& k = w.kernels[i];
    index.append(i);
    iteration.append(k.iteration);
    name.append(std::string(w.name(k)));
    op.append(std::string(w.op(k)));
    if (k.correlation >= 0)
      correlation.append(k.correlation);
    else
      correlation.append(py::none());
    cls.append(std::string(to_string(k.cls)));
    phase.append(std::string(to_string(k.phase)));
    stream.append(k.stream);
    host_ns.append(k.host_launch_ns);
    traced_ns.append(k.traced_start_ns);
    duration.append(k.work.duration_ns);
    flops.append(k.work.flops);
    bytes.append(k.work.dram_bytes);
    source.append(std::string(to_string(k.work.source)));
    instructions.append(k.work.instructions);
    instructions_source.append(std::string(to_string(k.work.instructions_source)));
    l2_excess.append(k.work.l2_excess_bytes);
    zeroed.append(static_cast<int>(k.work.zeroed_operands));
  }
  py::dict d;
  d["kernel_index"] = index;
  d["iteration"] = iteration;
  d["name"] = name;
  d["operator"] = op;
  d["correlation_id"] = correlation;
  d["class"] = cls;
  d["phase"] = phase;
  d["stream"] = stream;
  d["host_launch_ns"] = host_ns;
  d["traced_start_ns"] = traced_ns;
  d["traced_duration_ns"] = duration;
  d["flops"] = flops;
  d["dram_bytes"] = bytes;
  d["work_source"] = source;
  d["instructions"] = instructions;
  d["instructions_source"] = instructions_source;
  d["l2_excess_bytes"] = l2_excess;
  d["zeroed_operands"] = zeroed;
  return d;
}

PyResult run(const PyWorkload& w, const std::string& device, const std::string& policy,
             const std::string& baseline, std::uint64_t seed,
             const std::map<std::string, std::string>& settings) {
  PyResult r;
  r.spec.trace_path = w.path;
  r.spec.device = device;
  r.spec.policy = policy;
  r.spec.baseline = baseline;
  r.spec.seed = seed;
  r.spec.trace_options = w.options;
  r.spec.settings = settings;
  r.spec.host_range = true;  // as `run` (its summary.json)
  // The workload as loaded (the run would otherwise apply the default correction).
  if (!r.spec.settings.count("host_overhead") && w.host_overhead != "auto")
    r.spec.settings["host_overhead"] = w.host_overhead;
  // Names first, before any work (the CLI's messages).
  find_policy(policy);
  if (!baseline.empty() && baseline != "none") find_policy(baseline);
  py::gil_scoped_release release;
  load_device_cached(device);
  r.sim = simulate(r.spec);
  return r;
}

// `dvfsim hw validate --json`: the comparison as the CLI's JSON text.
std::string validate(const std::string& trace, const std::string& measured,
                     const std::string& device, const std::string& policy,
                     const std::string& host_overhead, int iterations,
                     const std::map<std::string, std::string>& settings, double tolerance_pct) {
  ValidationSpec v;
  v.trace = trace;
  v.measured = measured;
  v.device = device;
  v.policy = policy;
  v.settings = settings;
  v.host = parse_host_overhead(host_overhead);
  v.iterations = iterations;
  py::gil_scoped_release release;
  return validation_json(v, validate_trace(v), tolerance_pct);
}

int sweep(const std::string& experiment, const std::string& out, unsigned jobs, bool progress) {
  SweepOptions o;
  o.out = out;
  o.jobs = jobs;
  o.progress = progress;
  py::gil_scoped_release release;
  return run_sweep(experiment, o);
}

py::list policies() {
  py::list out;
  for (const PolicyInfo* p : all_policies()) {
    py::dict d;
    d["name"] = p->name;
    d["oracle"] = p->oracle;
    d["description"] = p->description;
    py::list params;
    for (const auto& s : p->params) {
      py::dict q;
      q["name"] = s.name;
      q["kind"] = s.kind == ParamSpec::Kind::required
                      ? "required"
                      : (s.kind == ParamSpec::Kind::defaulted ? "defaulted" : "optional");
      q["default"] = s.kind == ParamSpec::Kind::defaulted ? py::object(py::str(s.default_value))
                                                          : py::object(py::none());
      q["description"] = s.description;
      params.append(q);
    }
    d["params"] = params;
    out.append(d);
  }
  return out;
}

py::list devices() {
  py::list out;
  for (const auto& name : list_devices()) {
    const auto d = load_device_cached(name);
    py::dict x;
    x["name"] = d->device.name;
    x["display_name"] = d->device.display_name;
    x["min_core_mhz"] = d->device.core_clocks_mhz.front();
    x["max_core_mhz"] = d->device.core_clocks_mhz.back();
    x["memory_clocks_mhz"] = d->device.memory_clocks_mhz;
    x["power_limit_w"] = d->device.power_limit_w;
    x["path"] = d->device.source_path;
    out.append(x);
  }
  return out;
}

}  // namespace
}  // namespace dvfsim

PYBIND11_MODULE(_dvfsim, m) {
  using namespace dvfsim;
  m.doc() = "dvfsim's simulator (use the dvfsim package, not this module)";
  m.attr("version") = DVFSIM_VERSION;
  // Bad input (exit 2 in the CLI) becomes ValueError with the CLI's message.
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);

  py::class_<PyWorkload>(m, "Workload")
      .def_readonly("path", &PyWorkload::path)
      .def_readonly("host_overhead", &PyWorkload::host_overhead)
      .def_property_readonly("iterations",
                             [](const PyWorkload& w) { return w.workload->iterations; })
      .def_property_readonly("num_kernels",
                             [](const PyWorkload& w) { return w.workload->kernels.size(); })
      .def_property_readonly("capture_gpu",
                             [](const PyWorkload& w) { return w.workload->capture.device_name; })
      .def_property_readonly("iteration_rule",
                             [](const PyWorkload& w) { return w.workload->iteration_rule; })
      .def_property_readonly("notes", [](const PyWorkload& w) { return w.workload->notes; })
      .def("columns", &workload_columns);

  py::class_<PyResult>(m, "Result")
      .def("summary_json", [](const PyResult& r) { return summary_json(r.spec, r.sim); })
      .def("kernels_csv", [](const PyResult& r) { return kernels_csv(r.sim); })
      .def("names_csv", [](const PyResult& r) { return names_csv(r.sim); })
      .def("timeline_csv", [](const PyResult& r) { return timeline_csv(r.sim); })
      .def("clock_switches_csv", [](const PyResult& r) { return clock_switches_csv(r.sim); })
      .def("trace_json", [](const PyResult& r) { return perfetto_trace_json(r.sim); })
      .def("write", [](const PyResult& r, const std::string& dir) {
        py::gil_scoped_release release;
        write_run_outputs(dir, r.spec, r.sim);
      });

  m.def("load_trace", &load_trace, py::arg("path"), py::arg("gpu") = -1, py::arg("iterations") = 0,
        py::arg("capture_device") = "", py::arg("host_overhead") = "auto");
  m.def("run", &run, py::arg("workload"), py::arg("device"), py::arg("policy"), py::arg("baseline"),
        py::arg("seed"), py::arg("settings"));
  m.def("sweep", &sweep, py::arg("experiment"), py::arg("out"), py::arg("jobs"),
        py::arg("progress"));
  m.def("validate", &validate, py::arg("trace"), py::arg("measured"), py::arg("device"),
        py::arg("policy"), py::arg("host_overhead"), py::arg("iterations"), py::arg("settings"),
        py::arg("tolerance_pct"));
  m.def("policies", &policies);
  m.def("devices", &devices);
}
