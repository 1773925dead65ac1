// Single-instruction math for the kernels' inner loops, where an IEEE-exact libdevice call would
// cost about as long as the element's HBM traffic (softmax, SiLU) or the softmax beside a wgmma
// (attention). Outputs are 16-bit, or fp32 checked at 1e-5: each helper is within 2 ulp of fp32.
#pragma once

namespace ts::kernels {

// 2^x in one MUFU.EX2. exp2f compiles to ex2.approx.f32 without .ftz, which sm_90 wraps in three
// more instructions (FSETP, and two predicated FMULs that scale subnormal inputs and outputs:
// cuobjdump -sass, nvcc 13.0). Flushed results are below 2^-126: no 16-bit output changes and no
// fp32 one by more than 1.2e-38. exp2_ftz(-inf) = 0, as exp2f.
__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace ts::kernels
