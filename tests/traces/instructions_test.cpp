// Instruction counts: the Nsight Compute sidecar and the per-class estimate.
#include "traces/instructions.h"

#include <gtest/gtest.h>

#include <numeric>

#include "sim/error.h"
#include "tests/traces/test_util.h"
#include "traces/kineto.h"
#include "traces/native.h"
#include "traces/stats.h"

namespace dvfsim {
namespace {

TEST(KernelBaseName, KinetoAndNcuSpellingsAgree) {
  // The same kernels as Kineto (first) and Nsight Compute (second) print them.
  EXPECT_EQ(kernel_base_name("void at::native::vectorized_elementwise_kernel<8, "
                             "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&)>(int)"),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(kernel_base_name("void native::vectorized_elementwise_kernel<8, T1>(int, T2)"),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(kernel_base_name("void (anonymous namespace)::elementwise_kernel_with_index<int>(T1)"),
            "elementwise_kernel_with_index");
  EXPECT_EQ(kernel_base_name("void <unnamed>::elementwise_kernel_with_index<int>(T1)"),
            "elementwise_kernel_with_index");
  // Nsight Compute 2025.3 drops the '<' (validation/h200/ops/op_cat.ncu_subset.csv.gz);
  // the Kineto spelling of the same kernel is the first.
  EXPECT_EQ(kernel_base_name("void at::native::(anonymous namespace)::CatArrayBatchedCopy<"
                             "at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, "
                             "64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*)"),
            "CatArrayBatchedCopy");
  EXPECT_EQ(kernel_base_name("void unnamed>::CatArrayBatchedCopy<unnamed>::OpaqueType<2>, "
                             "unsigned int, 4, 64, 64>(T1 *, unnamed>::TensorSizeStride<T2, 4>)"),
            "CatArrayBatchedCopy");
  EXPECT_EQ(kernel_base_name("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"),
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT");
}

TEST(EstimatedInstructions, PerClassIntensities) {
  // 0.137 warp instructions per DRAM byte for elementwise kernels, 1.30e-4
  // per FLOP for GEMMs, none for copies and memsets.
  EXPECT_DOUBLE_EQ(estimated_instructions(KernelClass::elementwise, 5.0, 1000.0), 137.0);
  EXPECT_DOUBLE_EQ(estimated_instructions(KernelClass::gemm, 1e9, 123.0), 1.30e5);
  EXPECT_DOUBLE_EQ(estimated_instructions(KernelClass::memcpy, 1e9, 1e9), 0.0);
  EXPECT_DOUBLE_EQ(estimated_instructions(KernelClass::memset, 0.0, 1e9), 0.0);
}

TEST(EstimatedInstructions, ElementwiseFromTheKernelName) {
  // A 256 MB fp32 x.mul_(s): vectorised <4>, plain arithmetic, 0.0131 warp
  // instructions per byte of its 2 x 256 MB read and written.
  const std::string mul =
      "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, "
      "float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, "
      "at::native::AUnaryFunctor<float, float, float, "
      "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)";
  EXPECT_DOUBLE_EQ(
      estimated_instructions(KernelClass::elementwise, 64e6, 512e6, MathPipe::simt, mul),
      0.0131 * 512e6);  // 6.7072e6
  auto per_byte = [](const std::string& n) { return elementwise_instructions_per_byte(n); };
  // 16-bit arithmetic <8>: 0.0384; the fp32 -> bf16 cast: 0.0150.
  EXPECT_DOUBLE_EQ(per_byte("void at::native::vectorized_elementwise_kernel<8, "
                            "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >"),
                   0.0384);
  EXPECT_DOUBLE_EQ(
      per_byte("void at::native::vectorized_elementwise_kernel<8, "
               "at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, "
               "std::array<char*, 2ul> >"),
      0.0150);
  // Transcendental functors: 0.233 at 16 bits, 0.111 in float; ReLU is not one.
  EXPECT_DOUBLE_EQ(per_byte("void at::native::vectorized_elementwise_kernel<8, "
                            "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&)"),
                   0.233);
  EXPECT_DOUBLE_EQ(per_byte("void at::native::vectorized_elementwise_kernel<4, "
                            "at::native::(anonymous namespace)::silu_kernel(float)"),
                   0.111);
  EXPECT_DOUBLE_EQ(per_byte("void at::native::vectorized_elementwise_kernel<8, "
                            "at::native::BinaryFunctor<c10::BFloat16, threshold_kernel_impl>"),
                   0.0384);
  // Clamps and piecewise activations, as Nsight Compute counts them: ReLU's
  // clamp 0.0781 at 16 bits; in float the same multiple of float arithmetic,
  // 0.0781 x 0.0131 / 0.0384 = 0.02664; hard sigmoid is no transcendental.
  const std::string clamp =
      "at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, "
      "c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)";
  EXPECT_DOUBLE_EQ(per_byte("void at::native::vectorized_elementwise_kernel<8, " + clamp), 0.0781);
  EXPECT_NEAR(per_byte("void at::native::vectorized_elementwise_kernel<4, " + clamp), 0.02664,
              1e-5);
  EXPECT_DOUBLE_EQ(
      per_byte("void at::native::vectorized_elementwise_kernel<8, at::native::"
               "(anonymous namespace)::hardswish_backward_kernel(at::TensorIterator&)"),
      0.1432);
  EXPECT_DOUBLE_EQ(per_byte("void at::native::vectorized_elementwise_kernel<8, at::native::"
                            "(anonymous namespace)::hardsigmoid_kernel(at::TensorIteratorBase&)"),
                   0.0820);
  EXPECT_DOUBLE_EQ(per_byte("void at::native::vectorized_elementwise_kernel<4, at::native::"
                            "(anonymous namespace)::isneginf_kernel_impl(at::TensorIteratorBase&)"),
                   0.0336);
  // Unrolled: copies 0.2695, the rest 0.2313.
  EXPECT_DOUBLE_EQ(per_byte("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_"
                            "kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}>"),
                   0.2695);
  EXPECT_DOUBLE_EQ(per_byte("void at::native::unrolled_elementwise_kernel<at::native::CUDAFunctor_"
                            "add<float>, std::array<char*, 3ul>, 4>"),
                   0.2313);
  // The generic strided kernel: 0.193 per byte of floats, twice that of bf16.
  EXPECT_DOUBLE_EQ(
      per_byte("void at::native::elementwise_kernel<128, 2, "
               "at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<float> >"),
      0.193);
  EXPECT_DOUBLE_EQ(
      per_byte("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<"
               "at::native::CUDAFunctor_add<c10::BFloat16> >"),
      0.386);
  EXPECT_DOUBLE_EQ(per_byte("void at::native::(anonymous namespace)::CatArrayBatchedCopy_"
                            "vectorized<OpaqueType<2u>, unsigned int, 3, 128, 1, 16, 8>"),
                   0.0473);
  // torch.cat of a non-contiguous operand: the operator capture's 0.674.
  EXPECT_DOUBLE_EQ(
      per_byte("void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::"
               "native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>"),
      0.674);
  // index_select / embedding rows (a 4M x 512-byte gather: 4.1 GB read and
  // written, 2.36e8 instructions), 0.0576 per byte.
  EXPECT_DOUBLE_EQ(per_byte("void at::native::vectorized_gather_kernel<16, long>(char*, char*, "
                            "long*, int, long, long, long, long, bool)"),
                   0.0576);
  // Names that say none of these, and no name: the class mix, 0.137.
  EXPECT_DOUBLE_EQ(per_byte("void (anonymous namespace)::elementwise_kernel_with_index<int>(T1)"),
                   0.137);
  EXPECT_DOUBLE_EQ(per_byte(""), 0.137);
  // Only the elementwise class reads the name.
  EXPECT_DOUBLE_EQ(
      estimated_instructions(KernelClass::communication, 0.0, 1000.0, MathPipe::simt, mul), 137.0);
}

// Two kernels of one name and class moving `bytes` each, the first with work
// from shapes, the second from the duration fallback.
Workload shapes_and_fallback(std::string_view name, KernelClass cls, double bytes) {
  Workload w;
  w.intern("");
  const auto id = w.intern(name);
  w.iteration_begin.push_back(0);
  for (const WorkSource src : {WorkSource::shapes, WorkSource::fallback}) {
    Kernel k;
    k.name_id = id;
    k.cls = cls;
    k.work.source = src;
    k.work.dram_bytes = bytes;
    w.kernels.push_back(k);
  }
  return w;
}

TEST(EstimatedInstructions, BatchNormPassesFromTheKernelName) {
  // Batch norm's statistics pass issues 0.614 warp instructions per byte, its
  // backward reduction 0.167 (Nsight Compute, ResNet-50); its elementwise
  // passes and every other norm kernel the class's 0.139. 100 MB read: 61.4 M.
  const std::string stats =
      "void at::native::batch_norm_collect_statistics_channels_last_kernel<at::native::Var, "
      "c10::BFloat16, float, 4>(const T2 *, T3 *, T3 *, volatile T3 *, int *, int, int, T3)";
  EXPECT_DOUBLE_EQ(estimated_instructions(KernelClass::norm, 0.0, 100e6, MathPipe::simt, stats),
                   61.4e6);
  EXPECT_DOUBLE_EQ(norm_instructions_per_byte("void at::native::batch_norm_backward_reduce_"
                                              "channels_last_kernel<4, c10::BFloat16, float>"),
                   0.167);
  EXPECT_DOUBLE_EQ(norm_instructions_per_byte("void at::native::batch_norm_transform_input_"
                                              "channels_last_kernel<c10::BFloat16, float>"),
                   0.139);
  EXPECT_DOUBLE_EQ(norm_instructions_per_byte("void at::native::(anonymous namespace)::vectorized_"
                                              "layer_norm_kernel<c10::BFloat16, float, false>"),
                   0.139);
  // The annotation uses the family for a kernel whose bytes come from shapes;
  // the duration fallback's bytes keep the class's intensity.
  Workload w = shapes_and_fallback(stats, KernelClass::norm, 100e6);
  annotate_instructions_from_text(w, std::nullopt, "");
  EXPECT_DOUBLE_EQ(w.kernels[0].work.instructions, 61.4e6);
  EXPECT_DOUBLE_EQ(w.kernels[1].work.instructions, 13.9e6);
}

// Two iterations of A, B, memset, A, C: A and B have sidecar rows, C has none.
Workload toy() {
  Workload w;
  w.intern("");
  const auto a = w.intern("void at::native::kern_a<float>(int)");
  const auto b = w.intern("nvjet_b");
  const auto c = w.intern("void kern_c(int)");
  const auto m = w.intern("Memset (Device)");
  for (int it = 0; it < 2; ++it) {
    w.iteration_begin.push_back(static_cast<std::uint32_t>(w.kernels.size()));
    for (const auto id : {a, b, m, a, c}) {
      Kernel k;
      k.name_id = id;
      k.iteration = it;
      k.cls =
          id == m ? KernelClass::memset : (id == b ? KernelClass::gemm : KernelClass::elementwise);
      k.launch.grid[0] = 4;
      k.launch.block[0] = 128;
      k.launch.registers_per_thread = 32;
      k.work.duration_ns = 1000;
      k.work.dram_bytes = 1000;
      k.work.flops = 1e9;
      w.kernels.push_back(k);
    }
  }
  w.iterations = 2;
  return w;
}

TEST(InstructionEstimate, ElementwiseFamiliesForShapedWorkOnly) {
  // Two 256 MB fp32 mul_ kernels (2 x 256e6 bytes each): with work from
  // shapes the vectorised-float intensity, 0.0131 x 512e6 = 6.7072e6; with
  // work from the duration fallback the class mix, 0.137 x 512e6 = 7.0144e7.
  Workload w = shapes_and_fallback(
      "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, "
      "float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >",
      KernelClass::elementwise, 512e6);
  annotate_instructions_from_text(w, std::nullopt, "");
  EXPECT_DOUBLE_EQ(w.kernels[0].work.instructions, 0.0131 * 512e6);
  EXPECT_DOUBLE_EQ(w.kernels[1].work.instructions, 0.137 * 512e6);
  EXPECT_EQ(w.kernels[0].work.instructions_source, InstructionSource::estimated);
}

TEST(InstructionEstimates, AShapesCountIsKeptUnlessTheSidecarHasARow) {
  // A depthwise kernel whose count the annotation set from its operator's
  // shapes keeps it (1e6, not 1.131 x FLOPs / 64); a sidecar row replaces it.
  Workload w;
  w.names.push_back("dgrad2d_c1_k1_nhwc_specialized");
  w.iteration_begin.push_back(0);
  Kernel k;
  k.cls = KernelClass::conv;
  k.launch.grid[0] = 4;
  k.launch.block[0] = 128;
  k.launch.registers_per_thread = 40;
  k.work.flops = 6.4e7;
  k.work.instructions = 1e6;
  k.work.instructions_source = InstructionSource::shapes;
  w.kernels.push_back(k);
  Workload with_row = w;
  annotate_instructions_from_text(w, std::nullopt, "");
  EXPECT_DOUBLE_EQ(w.kernels[0].work.instructions, 1e6);
  EXPECT_EQ(w.kernels[0].work.instructions_source, InstructionSource::shapes);
  annotate_instructions_from_text(
      with_row,
      "kernel,grid,block,registers,instructions\ndgrad2d_c1_k1_nhwc_specialized,4,128,40,7\n",
      "t.ncu.csv");
  EXPECT_DOUBLE_EQ(with_row.kernels[0].work.instructions, 7.0);
  EXPECT_EQ(with_row.kernels[0].work.instructions_source, InstructionSource::ncu);
  EXPECT_EQ(parse_instruction_source(to_string(InstructionSource::shapes)),
            InstructionSource::shapes);
  // `trace info` reports the shapes' share of GPU time: one of two equal kernels.
  w.kernels[0].work.duration_ns = 1000;
  Kernel other = w.kernels[0];
  other.work.instructions_source = InstructionSource::estimated;
  w.kernels.push_back(other);
  const TraceStats st = compute_stats(w);
  EXPECT_DOUBLE_EQ(st.shapes_instructions_share, 0.5);
  EXPECT_DOUBLE_EQ(st.ncu_share, 0.0);
}

TEST(InstructionEstimates, NarrowConvolutionsAddTheirOperandReReads) {
  // A tensor-core convolution pass of 1e9 FLOPs: 1.3e-4 x 1e9 = 1.3e5 warp
  // instructions as a GEMM; with 2e8 bytes of L2 traffic beyond a GEMM's (a
  // narrow layer, conv_l2_bytes_per_flop) 0.127 x 2e8 = 2.54e7 more. A GEMM
  // kernel with the same excess (none has one; the term is the conv class's)
  // keeps the per-FLOP estimate.
  Workload w;
  w.names.push_back(
      "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x64x64");
  w.iteration_begin.push_back(0);
  Kernel k;
  k.cls = KernelClass::conv;
  k.work.flops = 1e9;
  k.work.l2_excess_bytes = 2e8;
  k.work.source = WorkSource::shapes;
  w.kernels.push_back(k);
  k.cls = KernelClass::gemm;
  w.kernels.push_back(k);
  annotate_instructions_from_text(w, std::nullopt, "");
  EXPECT_DOUBLE_EQ(w.kernels[0].work.instructions, 1.3e5 + 2.54e7);
  EXPECT_DOUBLE_EQ(w.kernels[1].work.instructions, 1.3e5);
}

TEST(InstructionSidecar, MatchesByNameGridBlockAndRegistersInOrder) {
  test::TempDir dir;
  // B's row comes first: rows are taken per key, so launch order may differ.
  const std::string csv = dir.write("t.ncu.csv",
                                    "# comment\n"
                                    "kernel,grid,block,registers,instructions\n"
                                    "nvjet_b,4,128,32,100\n"
                                    "\"void native::kern_a<T1>(int)\",4,128,32,200\n"
                                    "\"void native::kern_a<T1>(int)\",4,128,32,300\n");
  Workload w = toy();
  annotate_instructions_from(w, csv);
  for (int it = 0; it < 2; ++it) {
    const Kernel* k = &w.kernels[static_cast<std::size_t>(5 * it)];
    EXPECT_EQ(k[0].work.instructions, 200);
    EXPECT_EQ(k[0].work.instructions_source, InstructionSource::ncu);
    EXPECT_EQ(k[1].work.instructions, 100);
    EXPECT_EQ(k[2].work.instructions, 0);  // memset: copy engine
    EXPECT_EQ(k[2].work.instructions_source, InstructionSource::estimated);
    EXPECT_EQ(k[3].work.instructions, 300);
    EXPECT_EQ(k[4].work.instructions, 137);  // no row: 0.137 per byte x 1000 bytes
    EXPECT_EQ(k[4].work.instructions_source, InstructionSource::estimated);
  }
  EXPECT_NE(w.capture.instructions_source.find("t.ncu.csv: measured for 6 of 8 SM kernels"),
            std::string::npos)
      << w.capture.instructions_source;
}

TEST(InstructionSidecar, AnotherLaunchConfigDoesNotMatch) {
  test::TempDir dir;
  const std::string csv = dir.write("t.ncu.csv",
                                    "kernel,grid,block,registers,instructions\n"
                                    "nvjet_b,8,128,32,100\n"    // grid differs
                                    "nvjet_b,4,128,40,100\n");  // registers differ
  Workload w = toy();
  annotate_instructions_from(w, csv);
  EXPECT_EQ(w.kernels[1].work.instructions_source, InstructionSource::estimated);
  EXPECT_DOUBLE_EQ(w.kernels[1].work.instructions, 1.30e5);  // 1.30e-4 x 1e9 FLOPs
}

TEST(InstructionSidecar, BadFilesNameFileLineAndColumn) {
  test::TempDir dir;
  auto error = [&](const std::string& text) {
    const std::string p = dir.write("bad.ncu.csv", text);
    Workload w = toy();
    try {
      annotate_instructions_from(w, p);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("kernel,grid,block,registers\nx,1,1,1\n")
                .find("bad.ncu.csv:1: missing column "
                      "'instructions'"),
            std::string::npos);
  EXPECT_NE(error("kernel,grid,block,registers,instructions\nx,1,1,1,many\n")
                .find("bad.ncu.csv:2: column 'instructions': 'many' is not a number"),
            std::string::npos);
  EXPECT_NE(error("kernel,grid,block,registers,instructions\nx,1,1,1,-5\n").find("bad.ncu.csv:2"),
            std::string::npos);
  EXPECT_NE(error("kernel,grid,block,registers,instructions\nx,1,1\n")
                .find("bad.ncu.csv:2: 3 fields, the header has 5"),
            std::string::npos);
}

TEST(InstructionSidecar, ShippedTraceIsFullyMeasured) {
  // The sidecar beside the shipped trace matches every SM kernel of both
  // iterations; memsets (copy engine) have no instructions.
  const Workload w = read_kineto(test::shipped_trace_path());
  double per_iteration[2] = {0, 0};
  std::size_t measured = 0;
  for (const Kernel& k : w.kernels) {
    if (k.cls == KernelClass::memset) {
      EXPECT_EQ(k.work.instructions, 0);
      continue;
    }
    measured += k.work.instructions_source == InstructionSource::ncu;
    per_iteration[k.iteration] += k.work.instructions;
  }
  EXPECT_EQ(measured, 2876u);
  // Both iterations take the same rows: sum of the sidecar's instructions column.
  EXPECT_NEAR(per_iteration[0], 2.8794e10, 0.0001e10);
  EXPECT_DOUBLE_EQ(per_iteration[0], per_iteration[1]);
}

TEST(NativeFormat, VersionOneIsRejectedWithAHint) {
  test::TempDir dir;
  const std::string p = dir.write("old.dvfsim", "# dvfsim-trace v1\ndevice=h200\n");
  try {
    read_native(p);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("v1 has no instruction counts"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dvfsim

namespace dvfsim {
namespace {

// The math pipe is read from the kernel's name; its FLOPs cost tensor-core
// MMAs at the 16-bit rate (TF32: 2 per FLOP, 3xTF32: 6) or SIMT FFMAs.
TEST(MathPipe, FromTheKernelName) {
  EXPECT_EQ(
      math_pipe(KernelClass::gemm, "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4>"),
      MathPipe::simt);
  EXPECT_EQ(math_pipe(KernelClass::gemm, "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8"),
            MathPipe::simt);
  EXPECT_EQ(math_pipe(KernelClass::gemm, "ampere_sgemm_128x64_nn"), MathPipe::simt);
  // Depthwise convolutions run FFMAs on the SIMT pipes.
  for (const char* dw : {"dgrad2d_c1_k1_nhwc_specialized", "wgrad2d_c1_k1_nhwc_reduce",
                         "void cudnn::cnn::wgrad2d_grouped_direct_kernel<false, true>(int)",
                         "void at::native::conv_depthwise2d_forward_kernel<3, float>(int)"})
    EXPECT_EQ(math_pipe(KernelClass::conv, dw), MathPipe::simt) << dw;
  EXPECT_EQ(math_pipe(KernelClass::conv, "sm90_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32_f32"),
            MathPipe::tensor);
  EXPECT_EQ(
      math_pipe(KernelClass::gemm, "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x256x32"),
      MathPipe::tensor_tf32);
  EXPECT_EQ(math_pipe(KernelClass::conv, "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwc"),
            MathPipe::tensor_tf32);
  EXPECT_EQ(math_pipe(KernelClass::attention, "fmha_cutlassF_f32_aligned_64x64_rf_sm80"),
            MathPipe::tensor_3xtf32);
  EXPECT_EQ(math_pipe(KernelClass::attention, "fmha_cutlassF_bf16_aligned_64x128_rf_sm80"),
            MathPipe::tensor);
  EXPECT_EQ(math_pipe(KernelClass::gemm, "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_nn"),
            MathPipe::tensor);
  EXPECT_EQ(math_pipe(KernelClass::gemm, "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN"),
            MathPipe::tensor);
  // CUTLASS's TF32 MMA (fp32 data, m16n8k8: cuDNN's LSTM GEMMs), and the
  // same shape with 16-bit inputs.
  EXPECT_EQ(math_pipe(KernelClass::gemm,
                      "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>"),
            MathPipe::tensor_tf32);
  EXPECT_EQ(math_pipe(KernelClass::gemm, "cutlass_75_tensorop_s1688gemm_f16_256x128_32x2_nn"),
            MathPipe::tensor);
  // FP8 operands: element types in CUTLASS, cuBLASLt, FlashAttention-3 and
  // FlashInfer names, cuBLAS's nvjet type letter q; not their quantising
  // elementwise kernels, nor nvjet's bf16 or fp16 kernels.
  for (const char* fp8 :
       {"sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x128_warpgroupsize1x1x1",
        "cutlass3x_sm90_tensorop_gemm_e4m3_e4m3_f32_bf16_bf16_128x128x128_1x1x1_0_tnn",
        "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<cutlass::float_e4m3_t>>()",
        "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_sm100f",
        "nvjet_qqtst_64x64_128x8_2x1_v_bz_TNT", "nvjet_sm90_qqtst_128x256_128x6_2x1_v_bz_TNT"})
    EXPECT_EQ(math_pipe(KernelClass::gemm, fp8), MathPipe::tensor_fp8) << fp8;
  EXPECT_EQ(math_pipe(KernelClass::elementwise,
                      "void vllm::scaled_fp8_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>()"),
            MathPipe::simt);
  // INT8 operands (torch._int_mm, int8 inference libraries) run at the FP8
  // rate; complex fp32 products (cgemm) on the SIMT pipes.
  for (const char* int8 :
       {"sm80_xmma_gemm_i8i8_i32i32_i32_tn_n_tilesize128x128x64",
        "void cutlass::Kernel2<cutlass_80_tensorop_s8_i16832gemm_s8_128x128_64x3>",
        "ampere_int8_i16832gemm_int8_256x128_ldg16_stages_64x3_nt"})
    EXPECT_EQ(math_pipe(KernelClass::gemm, int8), MathPipe::tensor_int8) << int8;
  EXPECT_DOUBLE_EQ(tensor_rate_cost(MathPipe::tensor_int8), 0.5);
  EXPECT_EQ(math_pipe(KernelClass::gemm, "void cutlass::Kernel2<cutlass_80_simt_cgemm_128x64_8x5>"),
            MathPipe::simt);
  EXPECT_EQ(math_pipe(KernelClass::gemm, "ampere_cgemm_32x32_tn"), MathPipe::simt);
  EXPECT_EQ(math_pipe(KernelClass::gemm, "nvjet_sm90_hsh_128x256_64x4_1x2_h_bz_coopA_NTN"),
            MathPipe::tensor);
  EXPECT_TRUE(fp16_operands("nvjet_sm90_hsh_128x256_64x4_1x2_h_bz_coopA_NTN"));
  EXPECT_FALSE(fp16_operands("nvjet_sm90_qqtst_128x256_128x6_2x1_v_bz_TNT"));
  // Only GEMM, convolution and attention kernels use tensor cores.
  EXPECT_EQ(math_pipe(KernelClass::elementwise, "tf32_looking_elementwise"), MathPipe::simt);
}

// fp16 operands from the kernel's name; bf16, TF32, FP32 and names that do not
// say (cuDNN's SDPA kernels say "f16" for bf16 data too) are not fp16.
TEST(MathPipe, Fp16OperandsFromTheKernelName) {
  for (const char* n :
       {"nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
        "nvjet_hsh_128x256_64x4_1x2_h_bz_coopA_NTN",
        "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32",
        "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn", "volta_h884gemm_64x64_nn",
        "cutlass_80_tensorop_f16_s16816gemm_f16_256x128_32x3_tn_align8",
        "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, cutlass::half_t>>",
        "fmha_cutlassF_f16_aligned_64x128_rf_sm80"})
    EXPECT_TRUE(fp16_operands(n)) << n;
  for (const char* n :
       {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
        "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN", "nvjet_sm90_sss_64x8_64x16",
        "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc",
        "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_nn",
        "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, cutlass::bfloat16_t>>",
        "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64",
        "sm80_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x256x32", "ampere_sgemm_128x64_nn",
        "nvjet_sm90", "Kernel2"})
    EXPECT_FALSE(fp16_operands(n)) << n;
}

TEST(MathPipe, InstructionEstimates) {
  // 64 FLOPs per FFMA warp instruction (32 lanes x 2), 1.131 warp
  // instructions per FFMA (the loads and address work of a tiled SIMT GEMM).
  EXPECT_DOUBLE_EQ(estimated_instructions(KernelClass::gemm, 6.4e9, 0.0, MathPipe::simt), 1.131e8);
  EXPECT_DOUBLE_EQ(estimated_instructions(KernelClass::conv, 6.4e9, 0.0, MathPipe::simt), 1.131e8);
  // cuDNN's SIMT implicit convolutions gather their operands per element:
  // 0.0590 warp instructions per FLOP, 3.3x the tiled GEMM's 1.131 / 64.
  const std::string_view implicit =
      "void implicit_convolveNd_sgemm<__nv_bfloat16, 3, 1024, 5, 5, 3, 3, 3, 1, false, false, "
      "true>";
  EXPECT_EQ(math_pipe(KernelClass::conv, implicit), MathPipe::simt);
  EXPECT_DOUBLE_EQ(estimated_instructions(KernelClass::conv, 1e9, 0.0, MathPipe::simt, implicit),
                   5.90e7);
  EXPECT_DOUBLE_EQ(estimated_instructions(KernelClass::conv, 1e9, 0.0, MathPipe::simt,
                                          "void precomputed_convolve_sgemm<__nv_bfloat16, 128, 5>"),
                   5.90e7);
  EXPECT_DOUBLE_EQ(estimated_instructions(KernelClass::gemm, 6.4e9, 0.0, MathPipe::simt, implicit),
                   1.131e8);  // the rate is the convolutions'
  // TF32 MMAs do half a 16-bit MMA's FLOPs: twice the instructions.
  EXPECT_DOUBLE_EQ(estimated_instructions(KernelClass::gemm, 1e9, 0.0, MathPipe::tensor_tf32),
                   2.60e5);
  EXPECT_DOUBLE_EQ(
      estimated_instructions(KernelClass::attention, 1e9, 0.0, MathPipe::tensor_3xtf32), 3.96e6);
  // Memory-bound classes do not depend on the pipe.
  EXPECT_DOUBLE_EQ(estimated_instructions(KernelClass::elementwise, 5.0, 1000.0, MathPipe::simt),
                   137.0);
  EXPECT_DOUBLE_EQ(tensor_rate_cost(MathPipe::tensor), 1.0);
  EXPECT_DOUBLE_EQ(tensor_rate_cost(MathPipe::tensor_tf32), 2.0);
  EXPECT_DOUBLE_EQ(tensor_rate_cost(MathPipe::tensor_3xtf32), 6.0);
  // FP8 MMAs do twice a 16-bit MMA's FLOPs: half the instructions.
  EXPECT_DOUBLE_EQ(tensor_rate_cost(MathPipe::tensor_fp8), 0.5);
  EXPECT_DOUBLE_EQ(estimated_instructions(KernelClass::gemm, 1e9, 0.0, MathPipe::tensor_fp8),
                   6.5e4);
}

}  // namespace
}  // namespace dvfsim
