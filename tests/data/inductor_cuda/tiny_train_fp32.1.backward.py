# AOT ID: ['10_backward']
from ctypes import c_void_p, c_long, c_int
import torch
import math
import random
import os
import tempfile
from math import inf, nan
from cmath import nanj
from torch._inductor.hooks import run_intermediate_hooks
from torch._inductor.utils import maybe_profile
from torch._inductor.codegen.memory_planning import _align as align
from torch import device, empty_strided
from torch._inductor.async_compile import AsyncCompile
from torch._inductor.select_algorithm import extern_kernels
import triton
import triton.language as tl
from torch._inductor.runtime.triton_heuristics import start_graph, end_graph
from torch._C import _cuda_getCurrentRawStream as get_raw_stream

aten = torch.ops.aten
inductor_ops = torch.ops.inductor
_quantized = torch.ops._quantized
assert_size_stride = torch._C._dynamo.guards.assert_size_stride
assert_alignment = torch._C._dynamo.guards.assert_alignment
empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu
empty_strided_cpu_pinned = torch._C._dynamo.guards._empty_strided_cpu_pinned
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
empty_strided_xpu = torch._C._dynamo.guards._empty_strided_xpu
empty_strided_mtia = torch._C._dynamo.guards._empty_strided_mtia
reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor
alloc_from_pool = torch.ops.inductor._alloc_from_pool
async_compile = AsyncCompile()
empty_strided_p2p = torch._C._distributed_c10d._SymmetricMemory.empty_strided_p2p


# kernel path: /tmp/torchinductor_root/7u/c7umnu7m6sf5f4tabqjnwzkcfsiraqgdqbbiqgbcnijuqtmg3vuo.py
# Topologically Sorted Source Nodes: [mul_5, sum_1, silu_3, x_3, mul_4, mul_6, sum_2, mul_7, sub_5, sub_6, div_4, mul_8, reciprocal, mul_9, mul_10, sub_7, mul_11, add_9, mul_12], Original ATen: [aten.native_layer_norm_backward, aten.silu, aten.native_layer_norm, aten.silu_backward]
# Source node to ATen node mapping:
#   add_9 => add_9
#   div_4 => div_4
#   mul_10 => mul_10
#   mul_11 => mul_11
#   mul_12 => mul_12
#   mul_4 => mul_4
#   mul_5 => mul_5
#   mul_6 => mul_6
#   mul_7 => mul_7
#   mul_8 => mul_8
#   mul_9 => mul_9
#   reciprocal => reciprocal
#   silu_3 => add_6, div_3, exp_3, neg_3
#   sub_5 => sub_5
#   sub_6 => sub_6
#   sub_7 => sub_7
#   sum_1 => sum_1
#   sum_2 => sum_2
#   x_3 => sub_3
# Graph fragment:
#   %tangents_1 : Tensor "f32[8, 256][256, 1]cuda:0" = PlaceHolder[target=tangents_1]
#   %addmm_3 : Tensor "f32[8, 256][256, 1]cuda:0" = PlaceHolder[target=addmm_3]
#   %getitem_7 : Tensor "f32[8, 1][1, 1]cuda:0" = PlaceHolder[target=getitem_7]
#   %rsqrt_3 : Tensor "f32[8, 1][1, 1]cuda:0" = PlaceHolder[target=rsqrt_3]
#   %sum_1 : Tensor "f32[8, 1][1, 8]cuda:0" = PlaceHolder[target=sum_1]
#   %sum_2 : Tensor "f32[8, 1][1, 8]cuda:0" = PlaceHolder[target=sum_2]
#   %mul_5 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%tangents_1, 256), kwargs = {})
#   %sum_1 : Tensor "f32[8, 1][1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%tangents_1, [1], True), kwargs = {})
#   %neg_3 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%addmm_3,), kwargs = {})
#   %exp_3 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.exp.default](args = (%neg_3,), kwargs = {})
#   %add_6 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.add.Tensor](args = (%exp_3, 1), kwargs = {})
#   %div_3 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%addmm_3, %add_6), kwargs = {})
#   %sub_3 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%div_3, %getitem_7), kwargs = {})
#   %mul_4 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_3, %rsqrt_3), kwargs = {})
#   %mul_6 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%tangents_1, %mul_4), kwargs = {})
#   %sum_2 : Tensor "f32[8, 1][1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_6, [1], True), kwargs = {})
#   %mul_7 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_4, %sum_2), kwargs = {})
#   %sub_5 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%mul_5, %sum_1), kwargs = {})
#   %sub_6 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%sub_5, %mul_7), kwargs = {})
#   %div_4 : Tensor "f32[8, 1][1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%rsqrt_3, 256), kwargs = {})
#   %mul_8 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%div_4, %sub_6), kwargs = {})
#   %reciprocal : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reciprocal.default](args = (%add_6,), kwargs = {})
#   %mul_9 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%reciprocal, 1), kwargs = {})
#   %mul_10 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_8, %mul_9), kwargs = {})
#   %sub_7 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (1, %mul_9), kwargs = {})
#   %mul_11 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%addmm_3, %sub_7), kwargs = {})
#   %add_9 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_11, 1), kwargs = {})
#   %mul_12 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_10, %add_9), kwargs = {})
#   return %sum_1,%sum_2,%mul_12
triton_per_fused_native_layer_norm_native_layer_norm_backward_silu_silu_backward_0 = async_compile.triton('triton_per_fused_native_layer_norm_native_layer_norm_backward_silu_silu_backward_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 8, 'r0_': 256},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_native_layer_norm_native_layer_norm_backward_silu_silu_backward_0', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 4, 'num_store': 1, 'num_reduction': 2, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 64, 'r0_': 32768}}
)
@triton.jit
def triton_per_fused_native_layer_norm_native_layer_norm_backward_silu_silu_backward_0(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 8
    r0_numel = 256
    R0_BLOCK: tl.constexpr = 256
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 256*x0), xmask, other=0.0)
    tmp5 = tl.load(in_out_ptr0 + (r0_1 + 256*x0), xmask, other=0.0)
    tmp11 = tl.load(in_ptr1 + (x0), xmask, eviction_policy='evict_last')
    tmp13 = tl.load(in_ptr2 + (x0), xmask, eviction_policy='evict_last')
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(xmask, tmp1, 0)
    tmp4 = tl.sum(tmp3, 1)[:, None].to(tl.float32)
    tmp6 = -tmp5
    tmp7 = libdevice.exp(tmp6)
    tmp8 = tl.full([1, 1], 1.0, tl.float32)
    tmp9 = tmp7 + tmp8
    tmp10 = (tmp5 / tmp9)
    tmp12 = tmp10 - tmp11
    tmp14 = tmp12 * tmp13
    tmp15 = tmp0 * tmp14
    tmp16 = tl.broadcast_to(tmp15, [XBLOCK, R0_BLOCK])
    tmp18 = tl.where(xmask, tmp16, 0)
    tmp19 = tl.sum(tmp18, 1)[:, None].to(tl.float32)
    tmp20 = tl.full([1, 1], 0.00390625, tl.float32)
    tmp21 = tmp13 * tmp20
    tmp22 = tl.full([1, 1], 256.0, tl.float32)
    tmp23 = tmp0 * tmp22
    tmp24 = tmp23 - tmp4
    tmp25 = tmp14 * tmp19
    tmp26 = tmp24 - tmp25
    tmp27 = tmp21 * tmp26
    tmp28 = tl.full([1, 1], 1, tl.int32)
    tmp29 = (tmp28 / tmp9)
    tmp30 = tmp29 * tmp8
    tmp31 = tmp27 * tmp30
    tmp32 = tmp8 - tmp30
    tmp33 = tmp5 * tmp32
    tmp34 = tmp33 + tmp8
    tmp35 = tmp31 * tmp34
    tl.store(in_out_ptr0 + (r0_1 + 256*x0), tmp35, xmask)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/g5/cg57i3cn7ck665rntc5qwz7opsuwlzedm3nnmj6zcn3myodc3cpn.py
# Topologically Sorted Source Nodes: [sum_3], Original ATen: [aten.sum]
# Source node to ATen node mapping:
#   sum_3 => sum_3
# Graph fragment:
#   %mul_12 : Tensor "f32[8, 256][256, 1]cuda:0" = PlaceHolder[target=mul_12]
#   %sum_3 : Tensor "f32[1, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_12, [0], True), kwargs = {})
#   return %sum_3
triton_per_fused_sum_1 = async_compile.triton('triton_per_fused_sum_1', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 256, 'r0_': 8},
    reduction_hint=ReductionHint.DEFAULT,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_sum_1', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 10240, 'r0_': 0}}
)
@triton.jit
def triton_per_fused_sum_1(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 256
    r0_numel = 8
    R0_BLOCK: tl.constexpr = 8
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 256*r0_1), xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(xmask, tmp1, 0)
    tmp4 = tl.sum(tmp3, 1)[:, None].to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp4, xmask)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tt/ctthdny2jczh47yjqfc3gduw3fynomheta36qqvrgivqhqs5r6ar.py
# Topologically Sorted Source Nodes: [mul_14, sum_4, mul_15, sum_5, mul_16, sub_9, sub_10, mul_17, silu_2, reciprocal_1, mul_18, mul_19, sub_11, mul_20, add_11, mul_21], Original ATen: [aten.native_layer_norm_backward, aten.silu, aten.silu_backward]
# Source node to ATen node mapping:
#   add_11 => add_11
#   mul_14 => mul_14
#   mul_15 => mul_15
#   mul_16 => mul_16
#   mul_17 => mul_17
#   mul_18 => mul_18
#   mul_19 => mul_19
#   mul_20 => mul_20
#   mul_21 => mul_21
#   reciprocal_1 => reciprocal_1
#   silu_2 => add_4, exp_2, neg_2
#   sub_10 => sub_10
#   sub_11 => sub_11
#   sub_9 => sub_9
#   sum_4 => sum_4
#   sum_5 => sum_5
# Graph fragment:
#   %mm : Tensor "f32[8, 256][256, 1]cuda:0" = PlaceHolder[target=mm]
#   %mul_2 : Tensor "f32[8, 256][256, 1]cuda:0" = PlaceHolder[target=mul_2]
#   %div_5 : Tensor "f32[8, 1][1, 1]cuda:0" = PlaceHolder[target=div_5]
#   %sum_4 : Tensor "f32[8, 1][1, 8]cuda:0" = PlaceHolder[target=sum_4]
#   %sum_5 : Tensor "f32[8, 1][1, 8]cuda:0" = PlaceHolder[target=sum_5]
#   %addmm_2 : Tensor "f32[8, 256][256, 1]cuda:0" = PlaceHolder[target=addmm_2]
#   %mul_14 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mm, 256), kwargs = {})
#   %sum_4 : Tensor "f32[8, 1][1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mm, [1], True), kwargs = {})
#   %mul_15 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mm, %mul_2), kwargs = {})
#   %sum_5 : Tensor "f32[8, 1][1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_15, [1], True), kwargs = {})
#   %mul_16 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_2, %sum_5), kwargs = {})
#   %sub_9 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%mul_14, %sum_4), kwargs = {})
#   %sub_10 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%sub_9, %mul_16), kwargs = {})
#   %mul_17 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%div_5, %sub_10), kwargs = {})
#   %neg_2 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%addmm_2,), kwargs = {})
#   %exp_2 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.exp.default](args = (%neg_2,), kwargs = {})
#   %add_4 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%exp_2, 1), kwargs = {})
#   %reciprocal_1 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reciprocal.default](args = (%add_4,), kwargs = {})
#   %mul_18 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%reciprocal_1, 1), kwargs = {})
#   %mul_19 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_17, %mul_18), kwargs = {})
#   %sub_11 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (1, %mul_18), kwargs = {})
#   %mul_20 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%addmm_2, %sub_11), kwargs = {})
#   %add_11 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_20, 1), kwargs = {})
#   %mul_21 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_19, %add_11), kwargs = {})
#   return %sum_4,%sum_5,%mul_21
triton_per_fused_native_layer_norm_backward_silu_silu_backward_2 = async_compile.triton('triton_per_fused_native_layer_norm_backward_silu_silu_backward_2', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 8, 'r0_': 256},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_native_layer_norm_backward_silu_silu_backward_2', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 4, 'num_store': 1, 'num_reduction': 2, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 32, 'r0_': 40960}}
)
@triton.jit
def triton_per_fused_native_layer_norm_backward_silu_silu_backward_2(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 8
    r0_numel = 256
    R0_BLOCK: tl.constexpr = 256
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_out_ptr0 + (r0_1 + 256*x0), xmask, other=0.0)
    tmp5 = tl.load(in_ptr0 + (r0_1 + 256*x0), xmask, other=0.0)
    tmp11 = tl.load(in_ptr1 + (x0), xmask, eviction_policy='evict_last')
    tmp18 = tl.load(in_ptr2 + (r0_1 + 256*x0), xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(xmask, tmp1, 0)
    tmp4 = tl.sum(tmp3, 1)[:, None].to(tl.float32)
    tmp6 = tmp0 * tmp5
    tmp7 = tl.broadcast_to(tmp6, [XBLOCK, R0_BLOCK])
    tmp9 = tl.where(xmask, tmp7, 0)
    tmp10 = tl.sum(tmp9, 1)[:, None].to(tl.float32)
    tmp12 = tl.full([1, 1], 256.0, tl.float32)
    tmp13 = tmp0 * tmp12
    tmp14 = tmp13 - tmp4
    tmp15 = tmp5 * tmp10
    tmp16 = tmp14 - tmp15
    tmp17 = tmp11 * tmp16
    tmp19 = -tmp18
    tmp20 = libdevice.exp(tmp19)
    tmp21 = tl.full([1, 1], 1.0, tl.float32)
    tmp22 = tmp20 + tmp21
    tmp23 = tl.full([1, 1], 1, tl.int32)
    tmp24 = (tmp23 / tmp22)
    tmp25 = tmp24 * tmp21
    tmp26 = tmp17 * tmp25
    tmp27 = tmp21 - tmp25
    tmp28 = tmp18 * tmp27
    tmp29 = tmp28 + tmp21
    tmp30 = tmp26 * tmp29
    tl.store(in_out_ptr0 + (r0_1 + 256*x0), tmp30, xmask)
''', device_str='cuda')


async_compile.wait(globals())
del async_compile

class Runner:
    def __init__(self, partitions):
        self.partitions = partitions

    def recursively_apply_fns(self, fns):
        new_callables = []
        for fn, c in zip(fns, self.partitions):
            new_callables.append(fn(c))
        self.partitions = new_callables

    def call(self, args):
        primals_1, primals_3, primals_4, primals_6, primals_8, addmm, mul, addmm_1, mul_1, addmm_2, mul_2, addmm_3, getitem_7, rsqrt_3, div_5, div_6, div_7, tangents_1 = args
        args.clear()
        assert_size_stride(primals_1, (256, 256), (256, 1))
        assert_size_stride(primals_3, (8, 256), (256, 1))
        assert_size_stride(primals_4, (256, 256), (256, 1))
        assert_size_stride(primals_6, (256, 256), (256, 1))
        assert_size_stride(primals_8, (256, 256), (256, 1))
        assert_size_stride(addmm, (8, 256), (256, 1))
        assert_size_stride(mul, (8, 256), (256, 1))
        assert_size_stride(addmm_1, (8, 256), (256, 1))
        assert_size_stride(mul_1, (8, 256), (256, 1))
        assert_size_stride(addmm_2, (8, 256), (256, 1))
        assert_size_stride(mul_2, (8, 256), (256, 1))
        assert_size_stride(addmm_3, (8, 256), (256, 1))
        assert_size_stride(getitem_7, (8, 1), (1, 1))
        assert_size_stride(rsqrt_3, (8, 1), (1, 1))
        assert_size_stride(div_5, (8, 1), (1, 1))
        assert_size_stride(div_6, (8, 1), (1, 1))
        assert_size_stride(div_7, (8, 1), (1, 1))
        assert_size_stride(tangents_1, (8, 256), (256, 1))
        with torch.cuda._DeviceGuard(0):
            torch.cuda.set_device(0)
            buf2 = addmm_3; del addmm_3  # reuse
            # Topologically Sorted Source Nodes: [mul_5, sum_1, silu_3, x_3, mul_4, mul_6, sum_2, mul_7, sub_5, sub_6, div_4, mul_8, reciprocal, mul_9, mul_10, sub_7, mul_11, add_9, mul_12], Original ATen: [aten.native_layer_norm_backward, aten.silu, aten.native_layer_norm, aten.silu_backward]
            stream0 = get_raw_stream(0)
            triton_per_fused_native_layer_norm_native_layer_norm_backward_silu_silu_backward_0.run(buf2, tangents_1, getitem_7, rsqrt_3, 8, 256, stream=stream0)
            del getitem_7
            del rsqrt_3
            del tangents_1
            buf3 = empty_strided_cuda((8, 256), (256, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_3, permute_4, mm], Original ATen: [aten.t, aten.mm]
            extern_kernels.mm(buf2, primals_8, out=buf3)
            del primals_8
            buf4 = empty_strided_cuda((256, 256), (256, 1), torch.float32)
            # Topologically Sorted Source Nodes: [permute_5, mm_1], Original ATen: [aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf2, (256, 8), (1, 256), 0), mul_2, out=buf4)
            buf5 = empty_strided_cuda((1, 256), (256, 1), torch.float32)
            # Topologically Sorted Source Nodes: [sum_3], Original ATen: [aten.sum]
            stream0 = get_raw_stream(0)
            triton_per_fused_sum_1.run(buf2, buf5, 256, 8, stream=stream0)
            buf8 = buf3; del buf3  # reuse
            # Topologically Sorted Source Nodes: [mul_14, sum_4, mul_15, sum_5, mul_16, sub_9, sub_10, mul_17, silu_2, reciprocal_1, mul_18, mul_19, sub_11, mul_20, add_11, mul_21], Original ATen: [aten.native_layer_norm_backward, aten.silu, aten.silu_backward]
            stream0 = get_raw_stream(0)
            triton_per_fused_native_layer_norm_backward_silu_silu_backward_2.run(buf8, mul_2, div_5, addmm_2, 8, 256, stream=stream0)
            del addmm_2
            del div_5
            del mul_2
            buf9 = buf2; del buf2  # reuse
            # Topologically Sorted Source Nodes: [linear_2, permute_8, mm_2], Original ATen: [aten.t, aten.mm]
            extern_kernels.mm(buf8, primals_6, out=buf9)
            del primals_6
            buf10 = empty_strided_cuda((256, 256), (256, 1), torch.float32)
            # Topologically Sorted Source Nodes: [permute_9, mm_3], Original ATen: [aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf8, (256, 8), (1, 256), 0), mul_1, out=buf10)
            buf11 = empty_strided_cuda((1, 256), (256, 1), torch.float32)
            # Topologically Sorted Source Nodes: [sum_6], Original ATen: [aten.sum]
            stream0 = get_raw_stream(0)
            triton_per_fused_sum_1.run(buf8, buf11, 256, 8, stream=stream0)
            buf14 = buf9; del buf9  # reuse
            # Topologically Sorted Source Nodes: [mul_23, sum_7, mul_24, sum_8, mul_25, sub_13, sub_14, mul_26, silu_1, reciprocal_2, mul_27, mul_28, sub_15, mul_29, add_13, mul_30], Original ATen: [aten.native_layer_norm_backward, aten.silu, aten.silu_backward]
            stream0 = get_raw_stream(0)
            triton_per_fused_native_layer_norm_backward_silu_silu_backward_2.run(buf14, mul_1, div_6, addmm_1, 8, 256, stream=stream0)
            del addmm_1
            del div_6
            del mul_1
            buf15 = buf8; del buf8  # reuse
            # Topologically Sorted Source Nodes: [linear_1, permute_12, mm_4], Original ATen: [aten.t, aten.mm]
            extern_kernels.mm(buf14, primals_4, out=buf15)
            del primals_4
            buf16 = empty_strided_cuda((256, 256), (256, 1), torch.float32)
            # Topologically Sorted Source Nodes: [permute_13, mm_5], Original ATen: [aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf14, (256, 8), (1, 256), 0), mul, out=buf16)
            buf17 = empty_strided_cuda((1, 256), (256, 1), torch.float32)
            # Topologically Sorted Source Nodes: [sum_9], Original ATen: [aten.sum]
            stream0 = get_raw_stream(0)
            triton_per_fused_sum_1.run(buf14, buf17, 256, 8, stream=stream0)
            buf20 = buf15; del buf15  # reuse
            # Topologically Sorted Source Nodes: [mul_32, sum_10, mul_33, sum_11, mul_34, sub_17, sub_18, mul_35, silu, reciprocal_3, mul_36, mul_37, sub_19, mul_38, add_15, mul_39], Original ATen: [aten.native_layer_norm_backward, aten.silu, aten.silu_backward]
            stream0 = get_raw_stream(0)
            triton_per_fused_native_layer_norm_backward_silu_silu_backward_2.run(buf20, mul, div_7, addmm, 8, 256, stream=stream0)
            del addmm
            del div_7
            del mul
            buf21 = buf14; del buf14  # reuse
            # Topologically Sorted Source Nodes: [linear, permute_16, mm_6], Original ATen: [aten.t, aten.mm]
            extern_kernels.mm(buf20, primals_1, out=buf21)
            del primals_1
            buf22 = empty_strided_cuda((256, 256), (256, 1), torch.float32)
            # Topologically Sorted Source Nodes: [permute_17, mm_7], Original ATen: [aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf20, (256, 8), (1, 256), 0), primals_3, out=buf22)
            del primals_3
            buf23 = empty_strided_cuda((1, 256), (256, 1), torch.float32)
            # Topologically Sorted Source Nodes: [sum_12], Original ATen: [aten.sum]
            stream0 = get_raw_stream(0)
            triton_per_fused_sum_1.run(buf20, buf23, 256, 8, stream=stream0)
            del buf20
        return (buf22, reinterpret_tensor(buf23, (256, ), (1, ), 0), buf21, buf16, reinterpret_tensor(buf17, (256, ), (1, ), 0), buf10, reinterpret_tensor(buf11, (256, ), (1, ), 0), buf4, reinterpret_tensor(buf5, (256, ), (1, ), 0), )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    primals_1 = rand_strided((256, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    primals_3 = rand_strided((8, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    primals_4 = rand_strided((256, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    primals_6 = rand_strided((256, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    primals_8 = rand_strided((256, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    addmm = rand_strided((8, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    mul = rand_strided((8, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    addmm_1 = rand_strided((8, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    mul_1 = rand_strided((8, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    addmm_2 = rand_strided((8, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    mul_2 = rand_strided((8, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    addmm_3 = rand_strided((8, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    getitem_7 = rand_strided((8, 1), (1, 1), device='cuda:0', dtype=torch.float32)
    rsqrt_3 = rand_strided((8, 1), (1, 1), device='cuda:0', dtype=torch.float32)
    div_5 = rand_strided((8, 1), (1, 1), device='cuda:0', dtype=torch.float32)
    div_6 = rand_strided((8, 1), (1, 1), device='cuda:0', dtype=torch.float32)
    div_7 = rand_strided((8, 1), (1, 1), device='cuda:0', dtype=torch.float32)
    tangents_1 = rand_strided((8, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    return [primals_1, primals_3, primals_4, primals_6, primals_8, addmm, mul, addmm_1, mul_1, addmm_2, mul_2, addmm_3, getitem_7, rsqrt_3, div_5, div_6, div_7, tangents_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
