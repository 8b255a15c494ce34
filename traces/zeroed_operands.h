#pragma once
// Which operands of a matrix kernel came straight from a ReLU (docs/design.md,
// "Operands zeroed by a ReLU").
//
// A ReLU sets about half its output to zero, and a zero toggles no bit of the
// tensor cores' multipliers: on the H200 a GEMM with one such operand draws
// 0.94 of the tensor power of random data, with both 0.76
// (docs/calibration.md, "Operand data"). A Kineto trace holds no tensor
// identities, but its operator sequence says enough for networks written as a
// sequence of layers (VGG, ResNet, DenseNet, a ReLU MLP):
//
// - forward: a matrix product whose top-level operator follows a ReLU on its
//   thread reads one zeroed operand (its input);
// - backward: the autograd node of a product (its Sequence number names the
//   forward operator) computes the data gradient from the output's gradient,
//   which a ReLU right after the product zeroed where it cut (one operand), and
//   the weight gradient from that gradient and the input (one for each that a
//   ReLU touched). Which kernel is which comes from the name (cuDNN and CUTLASS
//   say `dgrad` and `wgrad`); a backward kernel whose name says neither is left
//   at 0.
//
// Between the ReLU and the product only operators that keep zeros may stand
// (views, reshapes, casts, copies, dropout). Anything else (pooling, a norm, an
// addition, a compiled region) counts as dense: the rule errs towards random
// data, which is what the power model was calibrated on.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sim/workload.h"

namespace dvfsim {

// A CPU operator range of a Kineto trace (category cpu_op).
struct OpSpan {
  std::int64_t tid = 0;
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  std::string_view name;       // must outlive the call
  std::int64_t sequence = -1;  // autograd "Sequence number", -1 when absent
};

// Sets Work::zeroed_operands of every gemm and conv kernel of `w` from the
// operator ranges `spans`; `host_tids[i]` is the host thread that launched
// kernel i (-1: not known; the kernel is left at 0). Other kernels are left
// alone. In a multi-branch network a ReLU that fed another branch can stand
// right before a product: its input is then taken as zeroed though it was not
// (one operand: 6 % of its tensor term on the H200).
void mark_zeroed_operands(Workload& w, std::vector<OpSpan> spans,
                          std::span<const std::int64_t> host_tids);

}  // namespace dvfsim
