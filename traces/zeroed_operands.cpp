#include "traces/zeroed_operands.h"

#include <algorithm>
#include <unordered_map>

namespace dvfsim {
namespace {

bool is_relu(std::string_view op) {
  return op == "aten::relu" || op == "aten::relu_";
}

// Whether a kernel name says the pass `p`grad (p = 'd' or 'w'), in either case
// of its first letter: cuDNN writes `dgrad_engine` and `winogradWgradData`.
bool contains_pass(std::string_view name, char p) {
  const char upper = static_cast<char>(p - 'a' + 'A');
  for (std::size_t at = name.find("grad"); at != std::string_view::npos;
       at = name.find("grad", at + 1))
    if (at > 0 && (name[at - 1] == p || name[at - 1] == upper)) return true;
  return false;
}

// Operators that pass a ReLU's zeros on unchanged (or add more).
bool keeps_zeros(std::string_view op) {
  static constexpr std::string_view kNames[] = {
      "aten::view",      "aten::reshape",         "aten::flatten", "aten::contiguous",
      "aten::to",        "aten::_to_copy",        "aten::clone",   "aten::dropout",
      "aten::dropout_",  "aten::feature_dropout", "aten::t",       "aten::permute",
      "aten::transpose", "aten::unsqueeze",       "aten::squeeze", "aten::expand",
  };
  return std::find(std::begin(kNames), std::end(kNames), op) != std::end(kNames);
}

// A thread's top-level operators (those no other operator contains), in time order.
struct Top {
  std::int64_t begin_ns, end_ns;
  std::string_view name;
  bool node;                   // an autograd node (the backward pass runs it)
  std::int64_t node_sequence;  // its Sequence number, -1 when absent
};

struct Thread {
  std::vector<Top> tops;
  // The top-level operator containing `t`, or -1.
  std::ptrdiff_t at(std::int64_t t) const {
    const auto it = std::upper_bound(tops.begin(), tops.end(), t,
                                     [](std::int64_t v, const Top& o) { return v < o.begin_ns; });
    if (it == tops.begin()) return -1;
    const auto j = std::prev(it);
    return t <= j->end_ns ? j - tops.begin() : -1;
  }
  // Whether the operator feeding top-level operator j (the one before it,
  // past operators that keep zeros) is a ReLU; step = +1: the one consuming
  // its output.
  bool relu_beside(std::ptrdiff_t j, std::ptrdiff_t step) const {
    for (std::ptrdiff_t i = j + step; i >= 0 && i < static_cast<std::ptrdiff_t>(tops.size());
         i += step) {
      const std::string_view n = tops[static_cast<std::size_t>(i)].name;
      if (is_relu(n)) return true;
      if (!keeps_zeros(n)) return false;
    }
    return false;
  }
};

}  // namespace

void mark_zeroed_operands(Workload& w, std::vector<OpSpan> spans,
                          std::span<const std::int64_t> host_tids) {
  std::sort(spans.begin(), spans.end(), [](const OpSpan& a, const OpSpan& b) {
    return a.tid != b.tid
               ? a.tid < b.tid
               : (a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.end_ns > b.end_ns);
  });
  std::unordered_map<std::int64_t, Thread> threads;
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::ptrdiff_t>> forward_of;
  Thread* th = nullptr;
  std::int64_t tid = 0, open_end = 0;
  for (const OpSpan& s : spans) {
    if (th == nullptr || s.tid != tid) {
      th = &threads[s.tid];
      tid = s.tid;
      open_end = INT64_MIN;
    }
    const bool node = s.name.starts_with("autograd::engine::evaluate_function");
    if (s.begin_ns >= open_end) {  // a new top-level operator
      th->tops.push_back({s.begin_ns, s.end_ns, s.name, node, node ? s.sequence : -1});
      open_end = s.end_ns;
    }
    const Top& top = th->tops.back();
    // A forward operator's Sequence number names the autograd node it made;
    // operators run by the backward pass (inside a node) are not forward ones.
    // Sequence numbers count per forward thread: one seen on two threads
    // names no operator (-1).
    if (s.sequence >= 0 && !top.node) {
      const auto j = static_cast<std::ptrdiff_t>(th->tops.size()) - 1;
      const auto [it, fresh] = forward_of.try_emplace(s.sequence, s.tid, j);
      if (!fresh && it->second.first != s.tid) it->second.second = -1;
    }
  }

  for (std::size_t i = 0; i < w.kernels.size() && i < host_tids.size(); ++i) {
    Kernel& k = w.kernels[i];
    if (k.cls != KernelClass::gemm && k.cls != KernelClass::conv) continue;
    const auto t = threads.find(host_tids[i]);
    if (t == threads.end()) continue;
    const std::ptrdiff_t j = t->second.at(k.host_launch_ns);
    if (j < 0) continue;
    const Top& top = t->second.tops[static_cast<std::size_t>(j)];
    int zeroed = 0;
    if (!top.node) {
      zeroed = t->second.relu_beside(j, -1);  // forward: the input
    } else {
      const auto f = forward_of.find(top.node_sequence);
      if (f == forward_of.end() || f->second.second < 0) continue;
      const Thread& ft = threads.at(f->second.first);
      const std::ptrdiff_t fj = f->second.second;
      const std::string_view name = w.name(k);
      const bool wgrad = contains_pass(name, 'w');
      const bool dgrad = contains_pass(name, 'd');
      if (wgrad == dgrad) continue;                 // neither (or both): not known
      const int gradient = ft.relu_beside(fj, +1);  // the output's gradient
      zeroed = gradient + (wgrad ? static_cast<int>(ft.relu_beside(fj, -1)) : 0);
    }
    k.work.zeroed_operands = static_cast<std::uint8_t>(zeroed);
  }
}

}  // namespace dvfsim
