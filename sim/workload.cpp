#include "sim/workload.h"

#include <fmt/format.h>

#include <array>

#include "sim/error.h"

namespace dvfsim {
namespace {
constexpr std::array<std::string_view, kKernelClassCount> kClassNames = {
    "gemm",      "attention",     "elementwise", "reduction", "norm",
    "optimizer", "communication", "memcpy",      "memset",    "other"};
constexpr std::array<std::string_view, kPhaseCount> kPhaseNames = {"forward", "backward",
                                                                   "optimizer", "other"};
}  // namespace

std::string_view to_string(KernelClass c) {
  return kClassNames[static_cast<int>(c)];
}
std::string_view to_string(Phase p) {
  return kPhaseNames[static_cast<int>(p)];
}
std::string_view to_string(WorkSource s) {
  return s == WorkSource::shapes ? "shapes" : "fallback";
}

std::optional<KernelClass> parse_kernel_class(std::string_view s) {
  for (int i = 0; i < kKernelClassCount; ++i)
    if (kClassNames[i] == s) return static_cast<KernelClass>(i);
  return std::nullopt;
}

std::optional<Phase> parse_phase(std::string_view s) {
  for (int i = 0; i < kPhaseCount; ++i)
    if (kPhaseNames[i] == s) return static_cast<Phase>(i);
  return std::nullopt;
}

std::uint32_t Workload::intern(std::string_view s) {
  auto it = name_index.find(std::string(s));
  if (it != name_index.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(names.size());
  names.emplace_back(s);
  name_index.emplace(names.back(), id);
  return id;
}

void Workload::validate() const {
  auto fail = [&](const std::string& what) {
    throw InputError(fmt::format("{}: invalid workload: {}", source_path, what));
  };
  if (kernels.empty()) fail("no kernels");
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const Kernel& k = kernels[i];
    if (k.name_id >= names.size() || k.op_id >= names.size())
      fail(fmt::format("kernel {}: name index out of range", i));
    if (i > 0 && k.host_launch_ns < kernels[i - 1].host_launch_ns)
      fail(fmt::format("kernel {}: host launch time goes backwards", i));
    if (k.work.duration_ns < 0) fail(fmt::format("kernel {}: negative duration", i));
    if (k.work.flops < 0 || k.work.dram_bytes < 0)
      fail(fmt::format("kernel {}: negative FLOPs or bytes", i));
    if (k.iteration < 0 || k.iteration >= iterations)
      fail(fmt::format("kernel {}: iteration {} outside 0..{}", i, k.iteration, iterations - 1));
  }
  if (iteration_begin.size() != static_cast<std::size_t>(iterations) + 1 ||
      iteration_begin.front() != 0 || iteration_begin.back() != kernels.size())
    fail("iteration table does not cover the kernels");
  for (std::size_t i = 0; i + 1 < iteration_begin.size(); ++i)
    if (iteration_begin[i] > iteration_begin[i + 1]) fail("iteration table not ascending");
  for (std::size_t i = 0; i < syncs.size(); ++i) {
    if (syncs[i].waits_until_kernel > kernels.size())
      fail(fmt::format("sync {}: kernel index out of range", i));
    if (i > 0 && syncs[i].host_begin_ns < syncs[i - 1].host_begin_ns)
      fail(fmt::format("sync {}: host time goes backwards", i));
  }
  for (const EventWait& w : event_waits)
    if (w.kernel >= kernels.size() || w.after >= w.kernel)
      fail(fmt::format("event wait {}->{}: must point to an earlier kernel", w.after, w.kernel));
}

}  // namespace dvfsim
