// CUTLASS sm_90a GEMM instances for bf16, trans_a=true, trans_b=false (one file per layout pair so
// the instances compile in parallel).
#include "gemm/gemm_sm90.cuh"

TS_GEMM_SM90_DEFINE(gemm_sm90_bf16_tn, cutlass::bfloat16_t, cutlass::layout::ColumnMajor,
                    cutlass::layout::RowMajor)
