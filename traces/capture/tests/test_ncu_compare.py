"""Kernel base names as Kineto and three Nsight Compute versions spell them."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ncu_compare import base_name  # noqa: E402


def test_spellings_agree():
    kineto = ("void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous "
              "namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(at::native::(anonymous "
              "namespace)::OpaqueType<2u>*)")
    old_ncu = "void <unnamed>::CatArrayBatchedCopy<<unnamed>::OpaqueType<2>, unsigned int, 4, 64, 64>(T1 *)"
    ncu_2025_3 = "void unnamed>::CatArrayBatchedCopy<unnamed>::OpaqueType<2>, unsigned int, 4, 64, 64>(T1 *)"
    assert base_name(kineto) == base_name(old_ncu) == base_name(ncu_2025_3) == "CatArrayBatchedCopy"
    assert base_name("void native::vectorized_elementwise_kernel<8, T1>(int, T2)") == \
        "vectorized_elementwise_kernel"
    assert base_name("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT") == \
        "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"
