// Work formulas of single operators.
#include "traces/annotate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>

namespace dvfsim {
namespace {

OpInput tensor(std::vector<std::int64_t> shape, std::string type = "c10::BFloat16") {
  return OpInput{{std::move(shape)}, std::move(type), "", {}};
}
OpInput scalar(std::string concrete) {
  return OpInput{{}, "Scalar", std::move(concrete), {}};
}

TEST(EstimateOpWork, MatrixMultiply) {
  const auto w = estimate_op_work({"aten::mm", {tensor({64, 128}), tensor({128, 256})}});
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->flops, 4194304.0);
  EXPECT_DOUBLE_EQ(w->dram_bytes, 2.0 * (64 * 128 + 128 * 256 + 64 * 256));
}

TEST(EstimateOpWork, AddmmCountsBias) {
  const auto w = estimate_op_work(
      {"aten::addmm", {tensor({256}), tensor({64, 128}), tensor({128, 256}), scalar("1")}});
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->flops, 2.0 * 64 * 128 * 256);
  EXPECT_DOUBLE_EQ(w->dram_bytes, 2.0 * (256 + 64 * 128 + 128 * 256 + 64 * 256));
}

TEST(EstimateOpWork, BatchedAndLinear) {
  const auto bmm = estimate_op_work({"aten::bmm", {tensor({4, 8, 16}), tensor({4, 16, 32})}});
  ASSERT_TRUE(bmm);
  EXPECT_DOUBLE_EQ(bmm->flops, 2.0 * 4 * 8 * 16 * 32);
  const auto lin =
      estimate_op_work({"aten::linear", {tensor({2, 10, 16}), tensor({32, 16}), tensor({32})}});
  ASSERT_TRUE(lin);
  EXPECT_DOUBLE_EQ(lin->flops, 2.0 * 20 * 16 * 32);
}

// Inductor's launcher op carries the kernel's buffers: each moved once.
TEST(EstimateOpWork, TritonPointwiseFromItsLauncherOp) {
  // add, mul and gelu fused over 1024 x 1024 bf16 elements; two inputs, one
  // output: 3 x 2 MiB; 1 + 1 + 8 FLOPs per element.
  const auto w = estimate_op_work(
      {"triton_poi_fused_add_gelu_mul_0",
       {tensor({1024, 1024}), tensor({1024, 1024}), tensor({1024, 1024}), scalar("1048576")}});
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->dram_bytes, 3.0 * 1024 * 1024 * 2);
  EXPECT_DOUBLE_EQ(w->flops, 10.0 * 1024 * 1024);
}

TEST(EstimateOpWork, TritonReductionCountsTheFusedOperators) {
  // The name's words: to, copy (0 FLOPs), add, div, expand (not arithmetic),
  // mul, pow, sum: 5 FLOPs per element of the largest buffer (8 x 1024 x 1024).
  const auto w = estimate_op_work(
      {"triton_per_fused__to_copy_add_div_expand_mul_pow_sum_view_0",
       {tensor({8192, 1024}), tensor({1024}, "float"), tensor({8, 1024, 1024}, "float"),
        tensor({8, 1024, 1}, "float"), scalar("8192"), scalar("1024")}});
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->dram_bytes, 8192.0 * 1024 * 2 + 1024 * 4 + 8.0 * 1024 * 1024 * 4 + 8192 * 4);
  EXPECT_DOUBLE_EQ(w->flops, 5.0 * 8 * 1024 * 1024);
}

TEST(EstimateOpWork, TritonTemplateGemmFromItsOperands) {
  // [512, 256] x [256, 1024] -> [512, 1024], bf16: 2·512·1024·256 FLOPs.
  const auto w = estimate_op_work(
      {"triton_tem_fused_mm_0", {tensor({512, 256}), tensor({256, 1024}), tensor({512, 1024})}});
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->flops, 2.0 * 512 * 1024 * 256);
  EXPECT_DOUBLE_EQ(w->dram_bytes, 2.0 * (512 * 256 + 256 * 1024 + 512 * 1024));
  // Without a matching operand pair there is nothing to count from.
  EXPECT_FALSE(estimate_op_work({"triton_tem_fused_mm_1", {tensor({512, 256}), tensor({3, 7})}}));
}

TEST(EstimateOpWork, AttentionCausalFromConcreteInputs) {
  OpCall fwd{"aten::_scaled_dot_product_cudnn_attention",
             {tensor({4, 16, 2048, 128}), tensor({4, 16, 2048, 128}), tensor({4, 16, 2048, 128}),
              scalar(""), scalar("True"), scalar("0."), scalar("False")}};
  const double full = 4.0 * 4 * 16 * 2048.0 * 2048 * 128;
  auto w = estimate_op_work(fwd);
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->flops, full);  // is_causal False
  fwd.inputs[6].concrete = "True";
  w = estimate_op_work(fwd);
  EXPECT_DOUBLE_EQ(w->flops, full / 2);
  fwd.inputs[6].concrete = "";  // unknown: non-causal
  EXPECT_DOUBLE_EQ(estimate_op_work(fwd)->flops, full);
}

TEST(EstimateOpWork, AttentionBackwardIsTwoAndAHalfForward) {
  OpCall bwd{"aten::_cudnn_attention_backward", {}};
  for (int i = 0; i < 5; ++i) bwd.inputs.push_back(tensor({1, 2, 64, 32}));
  bwd.inputs.push_back(tensor({1, 2, 64, 1}, "float"));
  while (bwd.inputs.size() < 16) bwd.inputs.push_back(scalar(""));
  bwd.inputs[14].concrete = "True";
  const auto w = estimate_op_work(bwd);
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->flops, 2.5 * 4.0 * 1 * 2 * 64 * 64 * 32 / 2);
}

TEST(EstimateOpWork, ElementwiseCopyAndReduction) {
  const auto copy =
      estimate_op_work({"aten::copy_", {tensor({1024}), tensor({1024}, "float"), scalar("False")}});
  ASSERT_TRUE(copy);
  EXPECT_DOUBLE_EQ(copy->dram_bytes, 1024.0 * (2 + 4));
  EXPECT_DOUBLE_EQ(copy->flops, 0.0);
  const auto sum = estimate_op_work(
      {"aten::sum", {tensor({8, 16}), OpInput{{}, "ScalarList", "[0]", {}}, scalar("True")}});
  ASSERT_TRUE(sum);
  EXPECT_DOUBLE_EQ(sum->dram_bytes, 2.0 * (8 * 16 + 16));
  const auto ln =
      estimate_op_work({"aten::native_layer_norm",
                        {tensor({4, 2048}, "float"), OpInput{{}, "ScalarList", "[2048]", {}},
                         tensor({2048}, "float"), tensor({2048}, "float")}});
  ASSERT_TRUE(ln);
  EXPECT_DOUBLE_EQ(ln->dram_bytes, 2.0 * 4 * 2048 * 4 + 2 * 2048 * 4);
}

TEST(EstimateOpWork, ActivationsAndTestsUnderTheirOwnNames) {
  // F.relu(inplace=True) launches aten::clamp_min_: a bf16 [256, 64, 112, 112]
  // activation (205,520,896 elements, 411 MB) read and written in place.
  const auto relu =
      estimate_op_work({"aten::clamp_min_", {tensor({256, 64, 112, 112}), scalar("0")}});
  ASSERT_TRUE(relu);
  EXPECT_DOUBLE_EQ(relu->dram_bytes, 2.0 * 2 * 205520896);
  // Hard swish's backward reads the gradient and the input, writes one.
  const auto hswish = estimate_op_work(
      {"aten::hardswish_backward", {tensor({128, 960, 7, 7}), tensor({128, 960, 7, 7})}});
  ASSERT_TRUE(hswish);
  EXPECT_DOUBLE_EQ(hswish->dram_bytes, 3.0 * 2 * 128 * 960 * 49);
  // Dropout's backward: the gradient (bf16) and the bool mask in, bf16 out.
  const auto drop =
      estimate_op_work({"aten::native_dropout_backward",
                        {tensor({16, 128, 512}), tensor({16, 128, 512}, "bool"), scalar("1.1")}});
  ASSERT_TRUE(drop);
  EXPECT_DOUBLE_EQ(drop->dram_bytes, 16.0 * 128 * 512 * (2 + 1 + 2));
  // A test writes one byte an element whatever it reads: float in, bool out.
  const auto ninf = estimate_op_work({"aten::isneginf", {tensor({16, 8, 512, 512}, "float")}});
  ASSERT_TRUE(ninf);
  EXPECT_DOUBLE_EQ(ninf->dram_bytes, 33554432.0 * (4 + 1));
  const auto eq = estimate_op_work({"aten::eq", {tensor({16, 128}, "long int"), scalar("-100")}});
  ASSERT_TRUE(eq);
  EXPECT_DOUBLE_EQ(eq->dram_bytes, 2048.0 * (8 + 1));
  // Two bool masks combined: 1 + 1 bytes in, 1 out an element.
  const auto both =
      estimate_op_work({"aten::logical_and", {tensor({4096}, "bool"), tensor({4096}, "bool")}});
  ASSERT_TRUE(both);
  EXPECT_DOUBLE_EQ(both->dram_bytes, 4096.0 * 3);
  // mse_loss writes the squared errors its mean child then reduces: two
  // float [64, 1000] in, one out.
  const auto mse = estimate_op_work(
      {"aten::mse_loss", {tensor({64, 1000}, "float"), tensor({64, 1000}, "float"), scalar("1")}});
  ASSERT_TRUE(mse);
  EXPECT_DOUBLE_EQ(mse->dram_bytes, 3.0 * 4 * 64000);
  // flip reads and writes its tensor.
  const auto flip = estimate_op_work({"aten::flip", {tensor({8, 3, 224, 224}), scalar("[3]")}});
  ASSERT_TRUE(flip);
  EXPECT_DOUBLE_EQ(flip->dram_bytes, 2.0 * 2 * 8 * 3 * 224 * 224);
}

TEST(EstimateOpWork, ReductionsOverOneDimAndScans) {
  const OpInput last{{}, "Scalar", "-1", {}};
  // argmax over the vocabulary of [8, 50257] floats: 8 int64 indices out.
  const auto argmax =
      estimate_op_work({"aten::argmax", {tensor({8, 50257}, "float"), last, scalar("False")}});
  ASSERT_TRUE(argmax);
  EXPECT_DOUBLE_EQ(argmax->dram_bytes, 8.0 * 50257 * 4 + 8 * 8);
  EXPECT_DOUBLE_EQ(argmax->flops, 8.0 * 50257);
  // all over the last dim of a [16, 8, 128, 128] bool mask: 16,384 bools out.
  const auto all =
      estimate_op_work({"aten::all", {tensor({16, 8, 128, 128}, "bool"), last, scalar("True")}});
  ASSERT_TRUE(all);
  EXPECT_DOUBLE_EQ(all->dram_bytes, 16.0 * 8 * 128 * 128 + 16 * 8 * 128);
  // No dim: one result.
  const auto any = estimate_op_work({"aten::any", {tensor({4, 4}, "bool")}});
  ASSERT_TRUE(any);
  EXPECT_DOUBLE_EQ(any->dram_bytes, 16.0 + 1);
  // A scan writes what it reads: [8, 64] int64, 4 KB each way.
  const auto cumsum =
      estimate_op_work({"aten::cumsum", {tensor({8, 64}, "long int"), last, scalar("")}});
  ASSERT_TRUE(cumsum);
  EXPECT_DOUBLE_EQ(cumsum->dram_bytes, 2.0 * 8 * 64 * 8);
  // norm's second argument is p, not a dim: the whole tensor still reduces.
  const auto norm = estimate_op_work({"aten::norm", {tensor({64, 32}, "float"), scalar("2")}});
  ASSERT_TRUE(norm);
  EXPECT_DOUBLE_EQ(norm->dram_bytes, 64.0 * 32 * 4 + 4);
}

TEST(EstimateOpWork, UpsamplingReadsOneSideAndWritesTheOther) {
  // Nearest x2 of [8, 512, 16, 16] floats to 32 x 32: 4 MiB read, 16 MiB
  // written, 1.328 warp instructions per output element (4 Mi outputs).
  const auto near = estimate_op_work(
      {"aten::upsample_nearest2d",
       {tensor({8, 512, 16, 16}, "float"), scalar("[32, 32]"), scalar("2."), scalar("2.")}});
  ASSERT_TRUE(near);
  const double in = 8.0 * 512 * 16 * 16, out = 4 * in;
  EXPECT_DOUBLE_EQ(near->dram_bytes, 4 * (in + out));
  EXPECT_DOUBLE_EQ(near->instructions, 1.328 * out);
  // Its backward reads the 16 MiB gradient and writes the 4 MiB input
  // gradient; 1.144 per gradient element read.
  const auto back = estimate_op_work({"aten::upsample_nearest2d_backward",
                                      {tensor({8, 512, 32, 32}, "float"), scalar("[32, 32]"),
                                       scalar("[8, 512, 16, 16]"), scalar("2."), scalar("2.")}});
  ASSERT_TRUE(back);
  EXPECT_DOUBLE_EQ(back->dram_bytes, 4 * (out + in));
  EXPECT_DOUBLE_EQ(back->instructions, 1.144 * out);
  // Bilinear on a channels-last map takes the per-element kernel's rate;
  // a 1 x 1 map is both layouts and takes the NCHW kernel's.
  OpInput nhwc = tensor({8, 21, 32, 32}, "float");
  nhwc.strides = {{21504, 1, 672, 21}};
  const auto bilinear = estimate_op_work(
      {"aten::upsample_bilinear2d", {nhwc, scalar("[256, 256]"), scalar("False")}});
  ASSERT_TRUE(bilinear);
  EXPECT_DOUBLE_EQ(bilinear->dram_bytes, 4.0 * 8 * 21 * (32 * 32 + 256 * 256));
  EXPECT_DOUBLE_EQ(bilinear->instructions, 6.63 * 8 * 21 * 256 * 256);
  OpInput pixel = tensor({8, 256, 1, 1}, "float");
  pixel.strides = {{256, 1, 1, 1}};
  const auto pooled =
      estimate_op_work({"aten::upsample_bilinear2d", {pixel, scalar("[32, 32]"), scalar("False")}});
  ASSERT_TRUE(pooled);
  EXPECT_DOUBLE_EQ(pooled->instructions, 0.894 * 8 * 256 * 32 * 32);
  // A trilinear backward on bf16 adds through compare-and-swap: 9.66 per
  // gradient element against 2.95 on floats.
  const auto tri = estimate_op_work({"aten::upsample_trilinear3d_backward",
                                     {tensor({1, 48, 112, 112, 112}), scalar("[112, 112, 112]"),
                                      scalar("[1, 48, 56, 56, 56]"), scalar("False")}});
  ASSERT_TRUE(tri);
  EXPECT_DOUBLE_EQ(tri->dram_bytes, 2.0 * 48 * (112.0 * 112 * 112 + 56.0 * 56 * 56));
  EXPECT_DOUBLE_EQ(tri->instructions, 9.66 * 48 * 112 * 112 * 112);
  // Bicubic has one kernel for both layouts: its own rate on a channels-last
  // map too (3.07 per output); nearest on a channels-last map its _nhwc_
  // kernel's (4.53). Antialiased modes run other kernels: no rule.
  const auto bicubic =
      estimate_op_work({"aten::upsample_bicubic2d", {nhwc, scalar("[256, 256]"), scalar("False")}});
  ASSERT_TRUE(bicubic);
  EXPECT_DOUBLE_EQ(bicubic->instructions, 3.07 * 8 * 21 * 256 * 256);
  const auto near_cl =
      estimate_op_work({"aten::upsample_nearest2d", {nhwc, scalar("[256, 256]"), scalar("8.")}});
  ASSERT_TRUE(near_cl);
  EXPECT_DOUBLE_EQ(near_cl->instructions, 4.53 * 8 * 21 * 256 * 256);
  EXPECT_FALSE(estimate_op_work(
      {"aten::_upsample_bilinear2d_aa", {nhwc, scalar("[256, 256]"), scalar("False")}}));
  // No output size recorded: no rule (the duration fallback).
  EXPECT_FALSE(estimate_op_work(
      {"aten::upsample_nearest2d", {tensor({8, 512, 16, 16}, "float"), scalar("")}}));
}

TEST(EstimateOpWork, RollMovesTheTensorOnce) {
  // Swin-T's shift of [64, 56, 56, 96] bf16 along dim 1: 38.5 MB read and
  // written, 3.03 warp instructions per element.
  const auto roll =
      estimate_op_work({"aten::roll", {tensor({64, 56, 56, 96}), scalar("[-3]"), scalar("[1]")}});
  ASSERT_TRUE(roll);
  const double n = 64.0 * 56 * 56 * 96;
  EXPECT_DOUBLE_EQ(roll->dram_bytes, 2 * 2 * n);
  EXPECT_DOUBLE_EQ(roll->instructions, 3.03 * n);
}

TEST(EstimateOpWork, AWrappedNumberDoesNotWidenTheResult) {
  // `x * 0.5` records the number as a 0-dim "double" tensor: a bf16 x of
  // 1024 elements is read (2 KB), the number (8 bytes), and a bf16 result
  // written (2 KB), not a double one (HF GPT-2's GELU read 1.5-2.5x ncu's
  // bytes before).
  const auto mul = estimate_op_work({"aten::mul", {tensor({1024}), tensor({}, "double")}});
  ASSERT_TRUE(mul);
  EXPECT_DOUBLE_EQ(mul->dram_bytes, 1024.0 * 2 + 8 + 1024.0 * 2);
  // Two dimensioned inputs of different widths: the wider one's result.
  const auto mixed = estimate_op_work({"aten::mul", {tensor({1024}), tensor({1024}, "float")}});
  ASSERT_TRUE(mixed);
  EXPECT_DOUBLE_EQ(mixed->dram_bytes, 1024.0 * (2 + 4) + 1024.0 * 4);
  // Only 0-dim inputs: their width.
  const auto scalars = estimate_op_work({"aten::mul", {tensor({}, "float"), tensor({}, "double")}});
  ASSERT_TRUE(scalars);
  EXPECT_DOUBLE_EQ(scalars->dram_bytes, 4.0 + 8 + 8);
}

TEST(EstimateOpWork, ACudnnRecurrentLayerDoesItsGemmsFlopsFromTheWeightShapes) {
  // Input [B=2, T=3, I=4] fp32; one layer of w_ih [8, 4], w_hh [8, 2] and two
  // biases [8] (G·H = 8). Each of the 6 steps multiplies both matrices once:
  // 2 x 6 x (32 + 16) = 576 FLOPs. Bytes: the input (24 x 4 = 96), the
  // weights ((32 + 16 + 8 + 8) x 4 = 256) and the gates written and read back
  // (2 x 6 x 8 x 4 = 384): 736. The backward twice both.
  const OpInput weights{{{8, 4}, {8, 2}, {8}, {8}}, "TensorList", "", {}};
  const auto fwd =
      estimate_op_work({"aten::_cudnn_rnn", {tensor({2, 3, 4}, "float"), weights, scalar("4")}});
  ASSERT_TRUE(fwd);
  EXPECT_DOUBLE_EQ(fwd->flops, 576.0);
  EXPECT_DOUBLE_EQ(fwd->dram_bytes, 736.0);
  EXPECT_TRUE(fwd->flops_on_gemm_kernels);  // not on the gate kernels
  const auto bwd = estimate_op_work(
      {"aten::_cudnn_rnn_backward", {tensor({2, 3, 4}, "float"), weights, scalar("4")}});
  ASSERT_TRUE(bwd);
  EXPECT_DOUBLE_EQ(bwd->flops, 1152.0);
  EXPECT_DOUBLE_EQ(bwd->dram_bytes, 1472.0);
  // The gate kernels, per element of B·T (H = 2, w_hh's columns): forward in
  // training 3 x 8 + 3 x 2 = 30 values, 6 x 30 x 4 = 720 bytes; backward
  // 3 x 8 + 5 x 2 = 34, 816 bytes; forward with train = False (the 13th
  // argument) 2 x 8 + 3 x 2 = 22, 528 bytes.
  EXPECT_DOUBLE_EQ(fwd->pointwise_dram_bytes, 720.0);
  EXPECT_DOUBLE_EQ(bwd->pointwise_dram_bytes, 816.0);
  // The input, the weights and a scalar `value` as argument `at`.
  const auto with = [&](std::size_t at, const std::string& value) {
    std::vector<OpInput> in = {tensor({2, 3, 4}, "float"), weights};
    while (in.size() < at) in.push_back(scalar(""));
    in.push_back(scalar(value));
    return in;
  };
  const auto inference = estimate_op_work({"aten::_cudnn_rnn", with(12, "False")});
  ASSERT_TRUE(inference);
  EXPECT_DOUBLE_EQ(inference->pointwise_dram_bytes, 528.0);
  EXPECT_DOUBLE_EQ(inference->dram_bytes, 736.0);
  // A GRU (mode 3, the backward's 11th argument) keeps both GEMMs' gate
  // gradients: backward 5 x 8 + 5 x 2 = 50 values, 1200 bytes.
  const auto gru_bwd = estimate_op_work({"aten::_cudnn_rnn_backward", with(10, "3")});
  ASSERT_TRUE(gru_bwd);
  EXPECT_DOUBLE_EQ(gru_bwd->pointwise_dram_bytes, 1200.0);
  // Without a 3-D input or any matrix it is not modelled (the fallback).
  EXPECT_FALSE(estimate_op_work({"aten::_cudnn_rnn", {tensor({6, 4}, "float"), weights}}));
  EXPECT_FALSE(estimate_op_work(
      {"aten::_cudnn_rnn", {tensor({2, 3, 4}, "float"), OpInput{{{8}}, "TensorList", "", {}}}}));
}

TEST(EstimateOpWork, TrainingBatchNormPassesOverItsInputTwice) {
  // x: 8 x 4 x 2 x 2 bf16 = 256 B; four float[4] parameters = 64 B.
  auto bn = [](const char* name, const char* training) {
    std::vector<OpInput> in = {tensor({8, 4, 2, 2})};
    for (int i = 0; i < 4; ++i) in.push_back(tensor({4}, "float"));
    in.push_back(scalar(training));
    return estimate_op_work({name, in});
  };
  // Training: statistics pass + normalise pass read x twice, write y once.
  EXPECT_DOUBLE_EQ(bn("aten::native_batch_norm", "True")->dram_bytes, 3 * 256.0 + 64);
  // Inference (running statistics): one read, one write.
  EXPECT_DOUBLE_EQ(bn("aten::native_batch_norm", "False")->dram_bytes, 2 * 256.0 + 64);
  // Backward in training: reduction (dy, x) + elementwise (dy, x -> dx).
  std::vector<OpInput> back = {tensor({8, 4, 2, 2}), tensor({8, 4, 2, 2})};
  for (int i = 0; i < 5; ++i) back.push_back(tensor({4}, "float"));
  back.push_back(scalar("True"));
  const auto b = estimate_op_work({"aten::native_batch_norm_backward", back});
  ASSERT_TRUE(b);
  EXPECT_DOUBLE_EQ(b->dram_bytes, 2 * 256.0 + 3 * 256.0 + 1.5 * 80);
}

// Layer norm's instructions from its shapes: a cost per element and one per
// row (Nsight Compute on the H100, validation/h100/norms/). The checks are
// the measured counts the rule must land near, per element.
TEST(EstimateOpWork, LayerNormInstructionsFollowTheRowWidth) {
  auto fwd = [](std::int64_t rows, std::int64_t features, const char* type) {
    return estimate_op_work({"aten::native_layer_norm",
                             {tensor({rows, features}, type),
                              OpInput{{}, "ScalarList", "[" + std::to_string(features) + "]", {}},
                              tensor({features}, type), tensor({features}, type)}});
  };
  // bf16, 8,192 rows of 2,048: measured 1.488 warp instructions per element
  // (0.838 + 401.3 x 2048^-0.838 = 1.511); the per-byte class rate gave 0.556.
  const auto wide = fwd(8192, 2048, "c10::BFloat16");
  ASSERT_TRUE(wide);
  EXPECT_NEAR(wide->instructions / (8192.0 * 2048), 1.488, 0.04);
  // fp32, 64 features (a channels-last network's narrow layers): measured
  // 15.45 per element, the rule 14.68 (its fit is within 6.1 % of each
  // width); at 4,096: 1.048.
  EXPECT_NEAR(fwd(262144, 64, "float")->instructions / (262144.0 * 64), 15.45, 0.061 * 15.45);
  EXPECT_NEAR(fwd(4096, 4096, "float")->instructions / (4096.0 * 4096), 1.048, 0.04);
  // The bytes stay one read and one write of the activation, plus weights.
  EXPECT_DOUBLE_EQ(wide->dram_bytes, 2.0 * 8192 * 2048 * 2 + 2 * 2048 * 2);
  // A normalized shape of several dimensions is their product: [7, 7, 96]
  // normalises rows of 4,704 (as wide as the fp32 4,096 case, within 10 %).
  const auto multi = estimate_op_work(
      {"aten::native_layer_norm",
       {tensor({64, 7, 7, 96}, "float"), OpInput{{}, "ScalarList", "[7, 7, 96]", {}}}});
  ASSERT_TRUE(multi);
  EXPECT_NEAR(multi->instructions / (64.0 * 4704), 0.418 + 320.0 * std::pow(4704.0, -0.748), 1e-9);
  // A list no tensor could have leaves the count to the per-class estimate
  // (-1) rather than overflow; an empty or zero one falls back to the
  // innermost dimension.
  const auto odd = [&](const char* list) {
    return estimate_op_work({"aten::native_layer_norm",
                             {tensor({8, 2048}), OpInput{{}, "ScalarList", list, {}}}})
        ->instructions;
  };
  EXPECT_EQ(odd("[99999999999999999999999999]"), -1.0);
  EXPECT_DOUBLE_EQ(odd("[0]"), wide->instructions / 1024);  // 8 of the 8,192 rows of 2,048
}

// The backward with weight gradients runs two passes (gamma-beta: read dy
// and x; input gradient: read dy and x, write dx), 10 bytes per bf16 element
// as Nsight Compute measured; without them (output mask [True, False,
// False]) only the input gradient.
TEST(EstimateOpWork, LayerNormBackwardReadsItsInputsTwiceForWeightGradients) {
  auto bwd = [](const char* mask) {
    return estimate_op_work(
        {"aten::native_layer_norm_backward",
         {tensor({1024, 768}), tensor({1024, 768}), OpInput{{}, "ScalarList", "[768]", {}},
          tensor({1024, 1}, "float"), tensor({1024, 1}, "float"), tensor({768}), tensor({768}),
          OpInput{{}, "ScalarList", mask, {}}}});
  };
  const double x = 1024.0 * 768 * 2, rest = 2 * 1024 * 4 + 2 * 768 * 2;
  const auto both = bwd("[True, True, True]");
  ASSERT_TRUE(both);
  EXPECT_DOUBLE_EQ(both->dram_bytes, 2 * x + 3 * x + 1.5 * rest);
  // 1.509 + 532/768 per element (measured 2.235 at 768 bf16 features).
  EXPECT_NEAR(both->instructions / (1024.0 * 768), 2.235, 0.05);
  const auto dx = bwd("[True, False, False]");
  ASSERT_TRUE(dx);
  EXPECT_DOUBLE_EQ(dx->dram_bytes, x + 2 * x + 1.5 * rest);
  EXPECT_NEAR(both->instructions - dx->instructions, 0.603 * 1024 * 768, 1e-6);
}

// Group norm reads its input for the statistics and again to normalise, like
// a training batch norm; its instructions are per element (bf16, measured
// 3.09 forward, 4.09 backward).
TEST(EstimateOpWork, GroupNormPassesOverItsInputTwice) {
  const auto g = estimate_op_work({"aten::native_group_norm",
                                   {tensor({16, 128, 64, 64}), tensor({128}), tensor({128}),
                                    scalar("16"), scalar("128"), scalar("4096"), scalar("32")}});
  ASSERT_TRUE(g);
  const double e = 16.0 * 128 * 64 * 64;
  EXPECT_DOUBLE_EQ(g->dram_bytes, 3 * e * 2 + 2 * 128 * 2);
  EXPECT_DOUBLE_EQ(g->instructions, 3.09 * e);
}

TEST(EstimateOpWork, MaxPoolReadsItsInputAndWritesOutputAndIndices) {
  // ResNet's stem pool: 3x3, stride 2, padding 1 on 112 x 112 -> 56 x 56.
  const std::vector<OpInput> fwd = {tensor({2, 4, 112, 112}), scalar("[3, 3]"), scalar("[2, 2]"),
                                    scalar("[1, 1]"),         scalar("[1, 1]"), scalar("False")};
  const auto f = estimate_op_work({"aten::max_pool2d_with_indices", fwd});
  ASSERT_TRUE(f);
  const double in = 2.0 * 4 * 112 * 112, out = 2.0 * 4 * 56 * 56;
  EXPECT_DOUBLE_EQ(f->dram_bytes, in * 2 + out * 2 + out * 8);  // bf16 in, out; int64 indices
  EXPECT_DOUBLE_EQ(f->flops, out * 9);
  // ceil_mode rounds the last window up: (7 + 0 - 2 - 1) / 2 = 2 -> 3 outputs.
  const std::vector<OpInput> ceil = {tensor({1, 1, 7, 7}), scalar("[2, 2]"), scalar("[2, 2]"),
                                     scalar("[0, 0]"),     scalar("[1, 1]"), scalar("True")};
  EXPECT_DOUBLE_EQ(estimate_op_work({"aten::max_pool2d_with_indices", ceil})->flops, 4.0 * 4 * 4);
  // Backward: read the gradient and the indices, write the input gradient.
  OpInput idx = tensor({2, 4, 56, 56}, "long int");
  const std::vector<OpInput> bwd = {
      tensor({2, 4, 56, 56}), tensor({2, 4, 112, 112}), scalar("[3, 3]"), scalar("[2, 2]"),
      scalar("[1, 1]"),       scalar("[1, 1]"),         scalar("False"),  idx};
  const auto b = estimate_op_work({"aten::max_pool2d_with_indices_backward", bwd});
  ASSERT_TRUE(b);
  EXPECT_DOUBLE_EQ(b->dram_bytes, out * 2 + out * 8 + in * 2);
  // Adaptive average pool to 1 x 1: read 2 x 8 x 7 x 7, write 2 x 8.
  const auto a =
      estimate_op_work({"aten::_adaptive_avg_pool2d", {tensor({2, 8, 7, 7}), scalar("[1, 1]")}});
  ASSERT_TRUE(a);
  EXPECT_DOUBLE_EQ(a->dram_bytes, 2.0 * 8 * 49 * 2 + 2.0 * 8 * 2);
  EXPECT_DOUBLE_EQ(a->flops, 2.0 * 8 * 49);
}

TEST(EstimateOpWork, UnknownOperator) {
  EXPECT_FALSE(estimate_op_work({"aten::frobnicate", {tensor({4})}}));
  EXPECT_FALSE(estimate_op_work({"aten::mm", {}}));  // shapes not recorded
}

TEST(EstimateOpWork, DtypeSizes) {
  EXPECT_EQ(dtype_bytes("c10::BFloat16"), 2);
  EXPECT_EQ(dtype_bytes("float"), 4);
  EXPECT_EQ(dtype_bytes("long int"), 8);
  EXPECT_FALSE(dtype_bytes("Scalar"));
  EXPECT_FALSE(dtype_bytes("TensorList"));
}

}  // namespace
}  // namespace dvfsim

namespace dvfsim {
namespace {

// A kernel of class `norm` named `name` that took `ns`, appended to `w`.
void add_kernel(Workload& w, std::string_view name, std::int64_t ns) {
  Kernel k;
  k.cls = KernelClass::norm;
  k.work.duration_ns = ns;
  k.name_id = w.intern(name);
  w.kernels.push_back(k);
}

// Operators of other libraries: their recorded tensors, moved once, capped at
// the capture device's bandwidth over the measured time.
TEST(AnnotateWork, CustomOpsMoveTheirRecordedTensorsUpToTheBandwidth) {
  Workload w;
  for (int i = 0; i < 3; ++i) {
    Kernel k;
    k.cls = KernelClass::other;
    k.work.duration_ns = 10'000;  // 10 us
    k.name_id = w.intern("some_kernel");
    w.kernels.push_back(k);
  }
  const std::vector<OpCall> ops = {
      {"_C::rotary_embedding", {tensor({1024, 512}), tensor({1024, 64})}},
      {"_C_cache_ops::reshape_and_cache", {tensor({1 << 20, 1024})}},  // a 2 GiB cache
      {"aten::not_modelled_here", {tensor({1024, 512})}}};
  const std::vector<ActivityFacts> facts = {{0, -1, false}, {1, -1, false}, {2, -1, false}};
  AnnotateOptions opt;
  opt.roofline = {1e12, 1e15, 1e14};  // 1 TB/s: 10 us move 10 MB
  annotate_work(w, ops, facts, opt);
  // 1024 x (512 + 64) bf16 elements.
  EXPECT_DOUBLE_EQ(w.kernels[0].work.dram_bytes, 2.0 * 1024 * 576);
  EXPECT_EQ(w.kernels[0].work.source, WorkSource::shapes);
  // The cache is not read whole: 10 us at 1 TB/s.
  EXPECT_DOUBLE_EQ(w.kernels[1].work.dram_bytes, 1e7);
  EXPECT_EQ(w.kernels[1].work.source, WorkSource::fallback);
  // ATen operators without a formula keep the duration fallback (over the
  // 10 us less the 1 us launch and drain), at the fraction of the class
  // `other`: 0.085 x 9 MB.
  EXPECT_DOUBLE_EQ(w.kernels[2].work.dram_bytes, 9e6 * opt.fallback_other_bandwidth_fraction);
  EXPECT_NEAR(w.kernels[2].work.dram_bytes, 765e3, 1e-6);
  EXPECT_EQ(w.kernels[2].work.source, WorkSource::fallback);
}

// A training batch norm's kernels take its bytes by the passes their names
// say they make (statistics: read x; transform: read x, write y; running
// statistics update: none), not by their measured durations.
TEST(AnnotateWork, BatchNormKernelsSplitTheirOperatorByTheirOwnPasses) {
  Workload w;
  const std::string update = std::string("void at::native::unrolled_elementwise_kernel_for_") +
                             "multi_outputs<3, at::native::batch_norm_update_stats_and_invert>";
  const std::string names[] = {
      "void at::native::batch_norm_collect_statistics_channels_last_kernel<>", update,
      "void at::native::batch_norm_transform_input_channels_last_kernel<>"};
  for (const std::string& n : names) {
    Kernel k;
    k.cls = KernelClass::norm;
    k.work.duration_ns = 10'000;  // equal durations: a duration split would give thirds
    k.name_id = w.intern(n);
    w.kernels.push_back(k);
  }
  std::vector<OpInput> in = {tensor({8, 4, 2, 2})};  // 256 B
  for (int i = 0; i < 4; ++i) in.push_back(tensor({4}, "float"));
  in.push_back(scalar("True"));
  const std::vector<OpCall> ops = {{"aten::native_batch_norm", in}};
  const std::vector<ActivityFacts> facts = {{0, -1, false}, {0, -1, false}, {0, -1, false}};
  annotate_work(w, ops, facts, AnnotateOptions{{1e12, 1e15, 1e14}});
  const double total = 3 * 256.0 + 64;  // TrainingBatchNormPassesOverItsInputTwice
  EXPECT_DOUBLE_EQ(w.kernels[0].work.dram_bytes, total / 3);
  EXPECT_DOUBLE_EQ(w.kernels[1].work.dram_bytes, 0.0);
  EXPECT_DOUBLE_EQ(w.kernels[2].work.dram_bytes, total * 2 / 3);
  for (const Kernel& k : w.kernels) EXPECT_EQ(k.work.source, WorkSource::shapes);
}

// Group norm's forward kernels take its bytes by their own passes (row
// moments: read x; fused parameters: per-group vectors; the one generic
// elementwise kernel: read x, write y), though the moments kernel, one block
// per group, runs longest: Nsight Compute on an fp16 VAE decoder's group
// norms read 1.00 and 1.00 of these (validation/h100/heldout23/).
TEST(AnnotateWork, GroupNormForwardKernelsSplitTheirOperatorByTheirOwnPasses) {
  Workload w;
  const std::pair<const char*, std::int64_t> kernels[] = {
      {"void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<c10::Half>(long, "
       "c10::Half, c10::Half const*, c10::Half*, c10::Half*)",
       58'000},
      {"void at::native::(anonymous namespace)::ComputeFusedParamsCUDAKernel<c10::Half>(long)",
       3'000},
      {"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<>>(int)",
       24'000}};
  for (const auto& [n, ns] : kernels) add_kernel(w, n, ns);
  const std::vector<OpCall> ops = {
      {"aten::native_group_norm",
       {tensor({4, 512, 64, 64}), tensor({512}), tensor({512}), scalar("4"), scalar("512"),
        scalar("4096"), scalar("32"), scalar("1e-06")}}};
  const std::vector<ActivityFacts> facts = {{0, -1, false}, {0, -1, false}, {0, -1, false}};
  annotate_work(w, ops, facts, AnnotateOptions{{1e12, 1e15, 1e14}});
  const double total =
      w.kernels[0].work.dram_bytes + w.kernels[1].work.dram_bytes + w.kernels[2].work.dram_bytes;
  ASSERT_GT(total, 3.0 * 2 * 4 * 512 * 4096);  // x read twice, y written once, at least
  EXPECT_DOUBLE_EQ(w.kernels[0].work.dram_bytes, total / 3);
  EXPECT_DOUBLE_EQ(w.kernels[1].work.dram_bytes, 0.0);
  EXPECT_DOUBLE_EQ(w.kernels[2].work.dram_bytes, total * 2 / 3);
}

// Group norm's backward: the internal-gradient kernel reads dy and x (two
// passes), the fused-parameter and gamma-beta kernels per-group vectors, and
// of its two generic elementwise kernels of one name the one with the most
// blocks is the dx pass (reads dy and x, writes dx: three); the other runs
// over per-channel vectors. Durations would give the five other shares.
TEST(AnnotateWork, GroupNormBackwardKernelsSplitByPassesAndTheirLaunches) {
  Workload w;
  const std::string generic =
      "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<>>(int)";
  const std::tuple<std::string, std::int64_t, std::uint32_t> kernels[] = {
      {"void at::native::(anonymous namespace)::ComputeInternalGradientsCUDAKernel<float>(long)",
       68'000, 8192},
      {generic, 3'000, 32},
      {"void at::native::(anonymous namespace)::ComputeBackwardFusedParamsCUDAKernel<float>(long)",
       4'000, 1024},
      {generic, 91'000, 50176},
      {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel1<float>(long)", 23'000,
       1}};
  for (const auto& [n, ns, grid] : kernels) {
    add_kernel(w, n, ns);
    w.kernels.back().launch.grid[0] = grid;
  }
  const std::vector<OpCall> ops = {
      {"aten::native_group_norm_backward",
       {tensor({4, 512, 64, 64}), tensor({4, 512, 64, 64}), tensor({4, 32}, "float"),
        tensor({4, 32}, "float"), tensor({512})}}};
  const std::vector<ActivityFacts> facts(5, ActivityFacts{0, -1, false});
  annotate_work(w, ops, facts, AnnotateOptions{{1e12, 1e15, 1e14}});
  double total = 0;
  for (const Kernel& k : w.kernels) total += k.work.dram_bytes;
  ASSERT_GT(total, 0.0);
  EXPECT_DOUBLE_EQ(w.kernels[0].work.dram_bytes, total * 2 / 5);
  EXPECT_DOUBLE_EQ(w.kernels[1].work.dram_bytes, 0.0);
  EXPECT_DOUBLE_EQ(w.kernels[2].work.dram_bytes, 0.0);
  EXPECT_DOUBLE_EQ(w.kernels[3].work.dram_bytes, total * 3 / 5);
  EXPECT_DOUBLE_EQ(w.kernels[4].work.dram_bytes, 0.0);
}

// cuFFT runs a 2-D real transform as two kernels, each a pass that reads the
// whole input and writes the whole output: each takes the operator's bytes,
// not half of them. rfft2 of 64x64x128x128 floats: 268,435,456 B in,
// 64x64x128x65 complex<float> (272,629,760 B) out; FLOPs 2.5 N log2 N per
// transform of N = 16,384 points, 4,096 transforms, split between the two.
TEST(AnnotateWork, EachCuFftKernelIsOnePassOverItsOperatorsTensors) {
  Workload w;
  for (const char* n : {"void regular_fft<128u, EPT<16u>, 32u, 4u>(...)",
                        "void vector_fft_symm_r2c<128u, EPT<8u>, 8u, 32u>(...)"}) {
    Kernel k;
    k.cls = KernelClass::other;
    k.work.duration_ns = 200'000;
    k.name_id = w.intern(n);
    w.kernels.push_back(k);
  }
  const std::vector<OpCall> ops = {
      {"aten::_fft_r2c",
       {tensor({64, 64, 128, 128}, "float"), OpInput{{}, "ScalarList", "[2, 3]", {}}, scalar("2"),
        scalar("True")}}};
  const std::vector<ActivityFacts> facts = {{0, -1, false}, {0, -1, false}};
  annotate_work(w, ops, facts, AnnotateOptions{{1e13, 1e15, 1e14}});
  const double bytes = 268435456.0 + 272629760.0;
  for (const Kernel& k : w.kernels) {
    EXPECT_DOUBLE_EQ(k.work.dram_bytes, bytes);
    EXPECT_EQ(k.work.source, WorkSource::shapes);
    EXPECT_NEAR(k.work.instructions, 0.110 * bytes, 1.0);
    EXPECT_DOUBLE_EQ(k.work.flops, 0.5 * 2.5 * 16384 * 14 * 4096);
  }
}

// Layer norm's backward kernels take its bytes by their own passes: the
// input gradient three (dy, x read; dx written), gamma-beta two (dy, x read),
// though gamma-beta runs longer.
TEST(AnnotateWork, LayerNormBackwardKernelsSplitTheirOperatorByTheirOwnPasses) {
  Workload w;
  const std::pair<const char*, std::int64_t> kernels[] = {
      {"void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<float, "
       "float, false>",
       40'000},
      {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float, float, "
       "32u, 32u, 128u, false, true, false>",
       85'000}};
  for (const auto& [n, ns] : kernels) add_kernel(w, n, ns);
  const std::vector<OpCall> ops = {{"aten::native_layer_norm_backward",
                                    {tensor({64, 768}, "float"), tensor({64, 768}, "float"),
                                     OpInput{{}, "ScalarList", "[768]", {}}}}};
  const std::vector<ActivityFacts> facts = {{0, -1, false}, {0, -1, false}};
  annotate_work(w, ops, facts, AnnotateOptions{{1e12, 1e15, 1e14}});
  const double x = 64.0 * 768 * 4;  // 2 x dy + 3 x x = 5 passes
  EXPECT_DOUBLE_EQ(w.kernels[0].work.dram_bytes, 3 * x);
  EXPECT_DOUBLE_EQ(w.kernels[1].work.dram_bytes, 2 * x);
  // Instructions follow the same shares and come from the shapes.
  const double total = 64.0 * 768 * (1.141 + 544.0 / 768);
  EXPECT_NEAR(w.kernels[0].work.instructions, 0.6 * total, 1e-6);
  EXPECT_EQ(w.kernels[1].work.instructions_source, InstructionSource::shapes);
}

// A recurrent layer's GEMM bytes go to its GEMM kernels by duration and its
// gate kernels' bytes to the others: to each kernel name its share of the
// summed duration, the same to each of its launches.
TEST(AnnotateWork, ARecurrentLayerGivesItsGateKernelsTheirOwnBytes) {
  Workload w;
  const auto add = [&](const std::string& name, KernelClass cls, std::int64_t ns) {
    Kernel k;
    k.cls = cls;
    k.work.duration_ns = ns;
    k.name_id = w.intern(name);
    w.kernels.push_back(k);
  };
  add("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x64x32", KernelClass::gemm, 30'000);
  add("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x64x32", KernelClass::gemm, 10'000);
  add("void elemWiseRNNcell<float, float, float>", KernelClass::other, 3'000);
  add("void elemWiseRNNcell<float, float, float>", KernelClass::other, 5'000);
  const OpInput weights{{{8, 4}, {8, 2}, {8}, {8}}, "TensorList", "", {}};
  const std::vector<OpCall> ops = {
      {"aten::_cudnn_rnn", {tensor({2, 3, 4}, "float"), weights, scalar("4")}}};
  const std::vector<ActivityFacts> facts(4, {0, -1, false});
  annotate_work(w, ops, facts, AnnotateOptions{{1e12, 1e15, 1e14}});
  // 576 FLOPs and 736 bytes over the GEMMs by duration (3 : 1); the gates'
  // 720 bytes evenly over the two launches of their one kernel name.
  EXPECT_DOUBLE_EQ(w.kernels[0].work.flops, 432.0);
  EXPECT_DOUBLE_EQ(w.kernels[1].work.flops, 144.0);
  EXPECT_DOUBLE_EQ(w.kernels[0].work.dram_bytes, 552.0);
  EXPECT_DOUBLE_EQ(w.kernels[1].work.dram_bytes, 184.0);
  EXPECT_DOUBLE_EQ(w.kernels[2].work.flops, 0.0);
  EXPECT_DOUBLE_EQ(w.kernels[2].work.dram_bytes, 360.0);
  EXPECT_DOUBLE_EQ(w.kernels[3].work.dram_bytes, 360.0);
}

// cuDNN's transforms: grid (ceil(S / 32), ceil(C / 32), N), 256 threads, 4
// elements a thread in a full tile, 3.76 warp instructions a thread.
TEST(LayoutTransform, WorkFromTheLaunchAndTheOperatorsTensors) {
  const std::string bf16 =
      "void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, "
      "false, true, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<"
      "float>, const T1 *, T2 *)";
  LaunchConfig l;
  l.grid[0] = 98, l.grid[1] = 2, l.grid[2] = 128, l.block[0] = 256;  // 128 x 64 x 56 x 56
  const double threads = 98.0 * 2 * 128 * 256;                       // 6,422,528
  // No operator: full tiles, 4 elements of 2 + 2 bytes a thread.
  auto w = layout_transform_work(bf16, l, {});
  ASSERT_TRUE(w.has_value());
  EXPECT_DOUBLE_EQ(w->dram_bytes, threads * 16);  // 102,760,448
  EXPECT_DOUBLE_EQ(w->instructions, threads * 3.76);
  // The operator's activation has that N, C and S: its elements, the same here.
  const std::vector<OpInput> act = {tensor({128, 64, 56, 56}), tensor({64, 64, 3, 3})};
  EXPECT_DOUBLE_EQ(layout_transform_work(bf16, l, act)->dram_bytes, 128.0 * 64 * 3136 * 4);
  // ResNet's three-channel input: 1,568 spatial tiles of one channel tile,
  // 3 of its 32 rows used; the instructions follow the threads all the same.
  l.grid[0] = 1568, l.grid[1] = 1;
  const std::vector<OpInput> stem = {tensor({128, 3, 224, 224}), tensor({64, 3, 7, 7})};
  w = layout_transform_work(bf16, l, stem);
  EXPECT_DOUBLE_EQ(w->dram_bytes, 128.0 * 3 * 224 * 224 * 4);  // 77,070,336, a tenth of the tiles'
  EXPECT_DOUBLE_EQ(w->instructions, 1568.0 * 128 * 256 * 3.76);
  // A channel count of the grid's channel tiles but no tensor of its N and S
  // (the output, not recorded): tiles filled to C / 32.
  l.grid[2] = 64;
  EXPECT_DOUBLE_EQ(layout_transform_work(bf16, l, stem)->dram_bytes,
                   1568.0 * 64 * 256 * 4 * (3.0 / 32) * 4);
  // float in and out: 8 bytes an element; unknown types and other kernels: none.
  const std::string f32 =
      "void cudnn::ops::nhwcToNchwKernel<float, float, float, true, false, "
      "(cudnnKernelDataType_t)0>(cudnn::ops::nhwc2nchw_params_t<float>)";
  LaunchConfig one;
  one.block[0] = 256;
  EXPECT_DOUBLE_EQ(layout_transform_work(f32, one, {})->dram_bytes, 256.0 * 4 * 8);
  EXPECT_FALSE(layout_transform_work("nchwToNhwcKernel<my_type, float>", one, {}).has_value());
  EXPECT_FALSE(layout_transform_work("vectorized_elementwise_kernel<4, float>", one, {}));
  // No launch configuration in the trace (1 x 1 x 1): nothing to count from.
  EXPECT_FALSE(layout_transform_work(f32, LaunchConfig{}, {}).has_value());
}

// The transforms take no share of their convolution's work: its FLOPs and
// bytes go to the convolution kernel whatever the transforms' durations.
TEST(AnnotateWork, LayoutTransformsLeaveTheirConvolutionsWorkToItsKernels) {
  Workload w;
  const std::string names[] = {
      "void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, "
      "false, true, (cudnnKernelDataType_t)0>",
      "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc"};
  for (const std::string& n : names) {
    Kernel k;
    k.cls = n.find("xmma") != std::string::npos ? KernelClass::conv : KernelClass::elementwise;
    k.work.duration_ns = 1'000'000;  // equal: a duration split would halve the FLOPs
    k.launch.grid[0] = 1, k.launch.grid[1] = 1, k.launch.grid[2] = 2, k.launch.block[0] = 256;
    k.name_id = w.intern(n);
    w.kernels.push_back(k);
  }
  // conv2d(x [2, 8, 4, 4], w [8, 8, 1, 1], bias, stride 1, padding 0, dilation 1, groups 1)
  const std::vector<OpCall> ops = {
      {"aten::conv2d",
       {tensor({2, 8, 4, 4}), tensor({8, 8, 1, 1}), OpInput{}, scalar("[1, 1]"), scalar("[0, 0]"),
        scalar("[1, 1]"), scalar("1")}}};
  const std::vector<ActivityFacts> facts = {{0, -1, false}, {0, -1, false}};
  annotate_work(w, ops, facts, AnnotateOptions{{1e12, 1e15, 1e14}});
  const double flops = 2.0 * 2 * 8 * 16 * 8;  // 4,096
  EXPECT_DOUBLE_EQ(w.kernels[0].work.flops, 0.0);
  EXPECT_DOUBLE_EQ(w.kernels[0].work.dram_bytes, 2.0 * 8 * 16 * 4);  // x: 256 elements, 2 + 2 B
  EXPECT_EQ(w.kernels[0].work.instructions_source, InstructionSource::shapes);
  EXPECT_DOUBLE_EQ(w.kernels[0].work.instructions, 2.0 * 256 * 3.76);
  EXPECT_DOUBLE_EQ(w.kernels[1].work.flops, flops);
  EXPECT_DOUBLE_EQ(w.kernels[1].work.dram_bytes, 512.0 + 128 + 512);  // x, w, y in bf16
  // No tile size in the name: no L2 traffic beyond a GEMM's is known.
  EXPECT_EQ(w.kernels[1].work.l2_excess_bytes, 0.0);
}

TEST(AnnotateWork, CubPrimitivesTakeTheirFamilysWork) {
  // An embedding backward's index sort (CUB) and its gradient kernel, 1 ms
  // each: the sort takes 0.027 of the DRAM peak and 0.022 of the issue peak
  // over 1 ms less 1 us; the operator's bytes all go to the other kernel.
  Workload w;
  const std::string names[] = {
      "void at_cuda_detail::cub::detail::radix_sort::DeviceRadixSortOnesweepKernel<long, int>",
      "void at::native::compute_grad_weight<float>(long*, float*, int)"};
  for (const std::string& n : names) {
    Kernel k;
    k.cls = KernelClass::other;
    k.work.duration_ns = 1'000'000;
    k.launch.grid[0] = 1, k.launch.grid[1] = 1, k.launch.grid[2] = 1, k.launch.block[0] = 256;
    k.name_id = w.intern(n);
    w.kernels.push_back(k);
  }
  // embedding_dense_backward(grad [64, 16] bf16, indices [64] int64, ...)
  const std::vector<OpCall> ops = {{"aten::embedding_dense_backward",
                                    {tensor({64, 16}), tensor({64}, "long int"), scalar("1000"),
                                     scalar("-1"), scalar("False")}}};
  const std::vector<ActivityFacts> facts = {{0, -1, false}, {0, -1, false}};
  annotate_work(w, ops, facts, AnnotateOptions{{1e12, 1e15, 1e14, 1e11}});
  const double s = 999e-6;
  EXPECT_DOUBLE_EQ(w.kernels[0].work.dram_bytes, s * 1e12 * 0.027);
  EXPECT_DOUBLE_EQ(w.kernels[0].work.instructions, s * 1e11 * 0.022);
  EXPECT_EQ(w.kernels[0].work.instructions_source, InstructionSource::shapes);
  EXPECT_EQ(w.kernels[0].work.source, WorkSource::fallback);
  EXPECT_DOUBLE_EQ(w.kernels[1].work.dram_bytes, 2.0 * 64 * 16 * 2 + 4.0 * 64 * 8);
  EXPECT_EQ(w.kernels[1].work.source, WorkSource::shapes);
  // Not CUB's: a Device...Kernel outside a cub namespace keeps the fallback.
  EXPECT_FALSE(is_cub_primitive_kernel("void mylib::DeviceScanKernel<int>(int*)"));
  EXPECT_TRUE(is_cub_primitive_kernel("void cub::DeviceScanKernel<int>(int*)"));
}

// A tiled implicit GEMM reads each operand once per tile of the other
// dimension: ceil(N/Nt)/N + ceil(M/Mt)/M bytes per FLOP at 2 bytes an element.
TEST(ConvL2, TileReadsPerUsefulFlop) {
  // The 3-D U-Net's 16-channel layer: 2 x 96^3 positions, 3x3x3 taps.
  const ConvGeometry g{2.0 * 96 * 96 * 96, 2.0 * 96 * 96 * 96, 16, 16, 27};
  const std::string fprop =
      "sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize256x32x32_stage4";
  // 16 channels on a 32-wide tile: 1/16; 1,769,472 positions in 6,912 full tiles: 1/256.
  EXPECT_DOUBLE_EQ(*conv_l2_bytes_per_flop(fprop, g), 1.0 / 16 + 1.0 / 256);
  EXPECT_DOUBLE_EQ(*conv_l2_bytes_per_flop("sm90" + fprop.substr(4), g),
                   kHopperConvL2Share * (1.0 / 16 + 1.0 / 256));
  // Data gradient: input positions and input channels.
  const ConvGeometry wide{2.0 * 96 * 96 * 96, 1000, 16, 200, 27};
  EXPECT_DOUBLE_EQ(
      *conv_l2_bytes_per_flop("sm80_xmma_dgrad_implicit_gemm_bf16bf16_tilesize128x128x32", wide),
      2.0 / 200 + 8.0 / 1000);
  // Weight gradient: M = 16 output channels, N = 16 x 27 = 432 (four 128-wide tiles).
  EXPECT_DOUBLE_EQ(*conv_l2_bytes_per_flop(
                       "sm80_xmma_wgrad_implicit_gemm_indexed_bf16bf16_tilesize32x128x32", g),
                   1.0 / 16 + 4.0 / 432);
  // 32-bit operands (TF32 tensor cores on fp32 tensors) move twice the bytes.
  EXPECT_DOUBLE_EQ(*conv_l2_bytes_per_flop(
                       "sm80_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_tilesize256x32x32", g),
                   2 * (1.0 / 16 + 1.0 / 256));
  EXPECT_FALSE(conv_l2_bytes_per_flop("sm90_xmma_fprop_implicit_gemm_bf16bf16_nhwc", g));
  EXPECT_FALSE(conv_l2_bytes_per_flop("sm90_xmma_gemm_bf16bf16_tilesize128x128x64", g));
  EXPECT_FALSE(conv_l2_bytes_per_flop("sm80_xmma_fprop_tilesize128x", g));
  EXPECT_FALSE(conv_l2_bytes_per_flop("sm80_xmma_fprop_tilesize0x64x32", g));
  EXPECT_FALSE(conv_l2_bytes_per_flop(fprop, ConvGeometry{}));
}

// A convolution kernel with a tile in its name carries its L2 reads beyond a
// GEMM's 0.0085 bytes per FLOP as Work::l2_excess_bytes.
TEST(AnnotateWork, TensorCoreConvolutionsCarryTheirTilesL2Traffic) {
  Workload w;
  Kernel k;
  k.cls = KernelClass::conv;
  k.work.duration_ns = 1'000'000;
  k.name_id = w.intern(
      "sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x64x32");
  w.kernels.push_back(k);
  const std::vector<OpCall> ops = {
      {"aten::conv2d",
       {tensor({2, 8, 4, 4}), tensor({8, 8, 1, 1}), OpInput{}, scalar("[1, 1]"), scalar("[0, 0]"),
        scalar("[1, 1]"), scalar("1")}}};
  const std::vector<ActivityFacts> facts = {{0, -1, false}};
  annotate_work(w, ops, facts, AnnotateOptions{{1e12, 1e15, 1e14}});
  const double flops = 2.0 * 2 * 8 * 16 * 8;  // 4,096
  // M = 32 positions in one 128-row tile, N = 8 channels in one 64-wide tile.
  const double bytes_per_flop = 1.0 / 8 + 1.0 / 32;
  EXPECT_DOUBLE_EQ(w.kernels[0].work.flops, flops);
  EXPECT_NEAR(w.kernels[0].work.l2_excess_bytes, (bytes_per_flop - kGemmL2BytesPerFlop) * flops,
              1e-9);  // 605.184 bytes
}

}  // namespace
}  // namespace dvfsim

namespace dvfsim {
namespace {

OpInput strided(std::vector<std::int64_t> shape, std::vector<std::int64_t> strides,
                std::string type = "c10::BFloat16") {
  return OpInput{{std::move(shape)}, std::move(type), "", {std::move(strides)}};
}

// A copy whose result's innermost dimension runs through the source with
// stride s moves min(32, s x e) - e bytes per element beyond the element,
// 0.74 of them through L2 (kLayoutChangeSectorUse).
TEST(LayoutChange, SectorTrafficOfTheStridedSide) {
  const std::vector<std::int64_t> shape{2, 16, 4, 4};  // 512 elements
  const std::vector<std::int64_t> nchw{256, 16, 4, 1}, nhwc{256, 1, 64, 16};
  // bf16 NCHW -> NHWC: C has stride 16 in the source, 32 bytes: 30 B beyond.
  EXPECT_NEAR(layout_change_l2_excess_bytes(shape, nhwc, shape, nchw, 2), 0.74 * 30 * 512, 1e-9);
  // Back: W has stride 16 in the channels-last source, the same.
  EXPECT_NEAR(layout_change_l2_excess_bytes(shape, nchw, shape, nhwc, 2), 0.74 * 30 * 512, 1e-9);
  // float, stride 4: 16 bytes apart, 12 beyond the element.
  const std::vector<std::int64_t> small{4, 4}, rows{4, 1}, cols{1, 4};
  EXPECT_NEAR(layout_change_l2_excess_bytes(small, rows, small, cols, 4), 0.74 * 12 * 16, 1e-9);
  // Same layout, other shapes, strides that do not match the shape: none.
  EXPECT_EQ(layout_change_l2_excess_bytes(shape, nchw, shape, nchw, 2), 0.0);
  EXPECT_EQ(layout_change_l2_excess_bytes(shape, nhwc, small, cols, 2), 0.0);
  EXPECT_EQ(layout_change_l2_excess_bytes(shape, std::vector<std::int64_t>{1, 1}, shape, nchw, 2),
            0.0);
}

TEST(LayoutChange, CopyAndCatFromTheirStrides) {
  const std::vector<std::int64_t> nchw{256, 16, 4, 1}, nhwc{256, 1, 64, 16};
  const auto copy = estimate_op_work(
      {"aten::copy_",
       {strided({2, 16, 4, 4}, nhwc), strided({2, 16, 4, 4}, nchw), scalar("False")}});
  ASSERT_TRUE(copy);
  EXPECT_DOUBLE_EQ(copy->dram_bytes, 2048.0);
  EXPECT_NEAR(copy->l2_excess_bytes, 0.74 * 30 * 512, 1e-9);
  // Without strides (an older profiler): no excess.
  const auto plain = estimate_op_work(
      {"aten::copy_", {tensor({2, 16, 4, 4}), tensor({2, 16, 4, 4}), scalar("False")}});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->l2_excess_bytes, 0.0);
  // torch.cat of an NCHW and a channels-last half (2x8x4x4 each, 256
  // elements): mixed layouts make a contiguous result; the channels-last half
  // is read with stride 8 along W, 16 bytes: 14 beyond each element.
  const OpInput halves{
      {{2, 8, 4, 4}, {2, 8, 4, 4}}, "TensorList", "", {{128, 16, 4, 1}, {128, 1, 32, 8}}};
  const auto cat = estimate_op_work({"aten::cat", {halves, scalar("1")}}, 2);
  ASSERT_TRUE(cat);
  EXPECT_DOUBLE_EQ(cat->dram_bytes, 2.0 * 512 * 2);
  EXPECT_NEAR(cat->l2_excess_bytes, 0.74 * 14 * 256, 1e-9);
  // Two transposed matrices (4x8 viewed from 8x4, 32 elements each): the
  // result is contiguous, each read with stride 4 along its rows, 8 bytes
  // apart in bf16: 6 beyond each element.
  const OpInput transposed{{{4, 8}, {4, 8}}, "TensorList", "", {{1, 4}, {1, 4}}};
  EXPECT_NEAR(estimate_op_work({"aten::cat", {transposed, scalar("0")}}, 2)->l2_excess_bytes,
              0.74 * 6 * 64, 1e-9);
  // An empty input (a KV cache's first step) does not decide the layout.
  const OpInput empty_first{{{0}, {2, 8, 4, 4}}, "TensorList", "", {{1}, {128, 1, 32, 8}}};
  EXPECT_EQ(estimate_op_work({"aten::cat", {empty_first, scalar("1")}}, 2)->l2_excess_bytes, 0.0);
  // Both channels-last: the result is too, no excess.
  const OpInput both{
      {{2, 8, 4, 4}, {2, 8, 4, 4}}, "TensorList", "", {{128, 1, 32, 8}, {128, 1, 32, 8}}};
  EXPECT_EQ(estimate_op_work({"aten::cat", {both, scalar("1")}}, 2)->l2_excess_bytes, 0.0);
}

}  // namespace
}  // namespace dvfsim
