# AOT ID: ['12_backward']
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


# kernel path: /tmp/torchinductor_root/fd/cfdanjgi5ooso7pbsvzhhwajwlr52b23rckjxo52fv36wqnzjnal.py
# Topologically Sorted Source Nodes: [view_7, linear, silu, mul_3, linear_1, mul_4, convert_element_type_18, reciprocal, mul_5, mul_6, sub, mul_7, add_4, mul_8, convert_element_type_20], Original ATen: [aten.view, aten._unsafe_view, aten.silu, aten.mul, aten.silu_backward]
# Source node to ATen node mapping:
#   add_4 => add_4
#   convert_element_type_18 => convert_element_type_18
#   convert_element_type_20 => convert_element_type_20
#   linear => view_1
#   linear_1 => view_3
#   mul_3 => mul_3
#   mul_4 => mul_4
#   mul_5 => mul_5
#   mul_6 => mul_6
#   mul_7 => mul_7
#   mul_8 => mul_8
#   reciprocal => reciprocal
#   silu => add_1, convert_element_type_4, convert_element_type_5, div, exp, neg
#   sub => sub
#   view_7 => view_7
# Graph fragment:
#   %mm_4 : Tensor "bf16[512, 5632][5632, 1]cuda:0" = PlaceHolder[target=mm_4]
#   %mm : Tensor "bf16[512, 5632][5632, 1]cuda:0" = PlaceHolder[target=mm]
#   %mm_1 : Tensor "bf16[512, 5632][5632, 1]cuda:0" = PlaceHolder[target=mm_1]
#   %view_7 : Tensor "bf16[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_4, [2, 256, 5632]), kwargs = {})
#   %view_1 : Tensor "bf16[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm, [2, 256, 5632]), kwargs = {})
#   %convert_element_type_4 : Tensor "f32[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_1, torch.float32), kwargs = {})
#   %neg : Tensor "f32[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%convert_element_type_4,), kwargs = {})
#   %exp : Tensor "f32[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.exp.default](args = (%neg,), kwargs = {})
#   %add_1 : Tensor "f32[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.add.Tensor](args = (%exp, 1), kwargs = {})
#   %div : Tensor "f32[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%convert_element_type_4, %add_1), kwargs = {})
#   %convert_element_type_5 : Tensor "bf16[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%div, torch.bfloat16), kwargs = {})
#   %mul_3 : Tensor "bf16[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%view_7, %convert_element_type_5), kwargs = {})
#   %view_3 : Tensor "bf16[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_1, [2, 256, 5632]), kwargs = {})
#   %mul_4 : Tensor "bf16[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%view_7, %view_3), kwargs = {})
#   %convert_element_type_18 : Tensor "f32[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%mul_4, torch.float32), kwargs = {})
#   %reciprocal : Tensor "f32[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reciprocal.default](args = (%add_1,), kwargs = {})
#   %mul_5 : Tensor "f32[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%reciprocal, 1), kwargs = {})
#   %mul_6 : Tensor "f32[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_18, %mul_5), kwargs = {})
#   %sub : Tensor "f32[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (1, %mul_5), kwargs = {})
#   %mul_7 : Tensor "f32[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_4, %sub), kwargs = {})
#   %add_4 : Tensor "f32[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_7, 1), kwargs = {})
#   %mul_8 : Tensor "f32[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_6, %add_4), kwargs = {})
#   %convert_element_type_20 : Tensor "bf16[2, 256, 5632][1441792, 5632, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%mul_8, torch.bfloat16), kwargs = {})
#   return %mul_3,%convert_element_type_20
triton_poi_fused__unsafe_view_mul_silu_silu_backward_view_0 = async_compile.triton('triton_poi_fused__unsafe_view_mul_silu_silu_backward_view_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 4194304}, 
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*bf16', 'in_ptr0': '*bf16', 'in_ptr1': '*bf16', 'out_ptr0': '*bf16', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused__unsafe_view_mul_silu_silu_backward_view_0', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 3, 'num_store': 2, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 40370176}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused__unsafe_view_mul_silu_silu_backward_view_0(in_out_ptr0, in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 2883584
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), None).to(tl.float32)
    tmp1 = tl.load(in_ptr1 + (x0), None).to(tl.float32)
    tmp10 = tl.load(in_out_ptr0 + (x0), None).to(tl.float32)
    tmp2 = tmp1.to(tl.float32)
    tmp3 = -tmp2
    tmp4 = libdevice.exp(tmp3)
    tmp5 = tl.full([1], 1.0, tl.float32)
    tmp6 = tmp4 + tmp5
    tmp7 = (tmp2 / tmp6)
    tmp8 = tmp7.to(tl.float32)
    tmp9 = tmp0 * tmp8
    tmp11 = tmp0 * tmp10
    tmp12 = tmp11.to(tl.float32)
    tmp13 = tl.full([1], 1, tl.int32)
    tmp14 = (tmp13 / tmp6)
    tmp15 = tmp14 * tmp5
    tmp16 = tmp12 * tmp15
    tmp17 = tmp5 - tmp15
    tmp18 = tmp2 * tmp17
    tmp19 = tmp18 + tmp5
    tmp20 = tmp16 * tmp19
    tmp21 = tmp20.to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp9, None)
    tl.store(in_out_ptr0 + (x0), tmp21, None)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/ph/cphxpk5qxruex7s4shwxpt6pmhesag4qh36ot7auu2rpgqjn2evx.py
# Topologically Sorted Source Nodes: [view_9, view_11, add_5, convert_element_type_25, convert_element_type_27, mul_9, y, mul_11, sum_1, div_1, mul_12, sub_1, mul_13, convert_element_type_28, add_6], Original ATen: [aten.view, aten.add, aten._fused_rms_norm_backward, aten._fused_rms_norm]
# Source node to ATen node mapping:
#   add_5 => add_5
#   add_6 => add_6
#   convert_element_type_25 => convert_element_type_25
#   convert_element_type_27 => convert_element_type_27
#   convert_element_type_28 => convert_element_type_28
#   div_1 => div_1
#   mul_11 => mul_11
#   mul_12 => mul_12
#   mul_13 => mul_13
#   mul_9 => mul_9
#   sub_1 => sub_1
#   sum_1 => sum_1
#   view_11 => view_11
#   view_9 => view_9
#   y => convert_element_type, mul
# Graph fragment:
#   %primals_2 : Tensor "bf16[2, 256, 2048][524288, 2048, 1]cuda:0" = PlaceHolder[target=primals_2]
#   %rsqrt : Tensor "f32[2, 256, 1][256, 1, 1]cuda:0" = PlaceHolder[target=rsqrt]
#   %mm_6 : Tensor "bf16[512, 2048][2048, 1]cuda:0" = PlaceHolder[target=mm_6]
#   %mm_8 : Tensor "bf16[512, 2048][2048, 1]cuda:0" = PlaceHolder[target=mm_8]
#   %primals_1 : Tensor "bf16[2048][1]cuda:0" = PlaceHolder[target=primals_1]
#   %tangents_1 : Tensor "bf16[2, 256, 2048][524288, 2048, 1]cuda:0" = PlaceHolder[target=tangents_1]
#   %sum_1 : Tensor "f32[2, 256, 1][256, 1, 512]cuda:0" = PlaceHolder[target=sum_1]
#   %view_9 : Tensor "bf16[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_6, [2, 256, 2048]), kwargs = {})
#   %view_11 : Tensor "bf16[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_8, [2, 256, 2048]), kwargs = {})
#   %add_5 : Tensor "bf16[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%view_9, %view_11), kwargs = {})
#   %convert_element_type_25 : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%add_5, torch.float32), kwargs = {})
#   %convert_element_type_27 : Tensor "f32[2048][1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%primals_1, torch.float32), kwargs = {})
#   %mul_9 : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_25, %convert_element_type_27), kwargs = {})
#   %convert_element_type : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%primals_2, torch.float32), kwargs = {})
#   %mul : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type, %rsqrt), kwargs = {})
#   %mul_11 : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul, %mul_9), kwargs = {})
#   %sum_1 : Tensor "f32[2, 256, 1][256, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_11, [2], True), kwargs = {})
#   %div_1 : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%mul, 2048), kwargs = {})
#   %mul_12 : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%div_1, %sum_1), kwargs = {})
#   %sub_1 : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%mul_9, %mul_12), kwargs = {})
#   %mul_13 : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_1, %rsqrt), kwargs = {})
#   %convert_element_type_28 : Tensor "bf16[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%mul_13, torch.bfloat16), kwargs = {})
#   %add_6 : Tensor "bf16[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%tangents_1, %convert_element_type_28), kwargs = {})
#   return %sum_1,%add_6
triton_red_fused__fused_rms_norm__fused_rms_norm_backward_add_view_1 = async_compile.triton('triton_red_fused__fused_rms_norm__fused_rms_norm_backward_add_view_1', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.reduction(
    size_hints={'x': 512, 'r0_': 2048},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*fp32', 'in_ptr2': '*bf16', 'in_ptr3': '*bf16', 'in_ptr4': '*bf16', 'in_ptr5': '*bf16', 'out_ptr1': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]], (8,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused__fused_rms_norm__fused_rms_norm_backward_add_view_1', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 10, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 2048, 'r0_': 12587008}}
)
@triton.jit
def triton_red_fused__fused_rms_norm__fused_rms_norm_backward_add_view_1(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 512
    r0_numel = 2048
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = xindex
    tmp2 = tl.load(in_ptr1 + (x0), xmask, eviction_policy='evict_last')
    _tmp13 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + 2048*x0), r0_mask & xmask, eviction_policy='evict_last', other=0.0).to(tl.float32)
        tmp4 = tl.load(in_ptr2 + (r0_1 + 2048*x0), r0_mask & xmask, eviction_policy='evict_last', other=0.0).to(tl.float32)
        tmp5 = tl.load(in_ptr3 + (r0_1 + 2048*x0), r0_mask & xmask, eviction_policy='evict_last', other=0.0).to(tl.float32)
        tmp8 = tl.load(in_ptr4 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0).to(tl.float32)
        tmp1 = tmp0.to(tl.float32)
        tmp3 = tmp1 * tmp2
        tmp6 = tmp4 + tmp5
        tmp7 = tmp6.to(tl.float32)
        tmp9 = tmp8.to(tl.float32)
        tmp10 = tmp7 * tmp9
        tmp11 = tmp3 * tmp10
        tmp12 = tl.broadcast_to(tmp11, [XBLOCK, R0_BLOCK])
        tmp14 = _tmp13 + tmp12
        _tmp13 = tl.where(r0_mask & xmask, tmp14, _tmp13)
    tmp13 = tl.sum(_tmp13, 1)[:, None]
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp15 = tl.load(in_ptr5 + (r0_1 + 2048*x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp16 = tl.load(in_ptr2 + (r0_1 + 2048*x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp17 = tl.load(in_ptr3 + (r0_1 + 2048*x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp20 = tl.load(in_ptr4 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0).to(tl.float32)
        tmp23 = tl.load(in_ptr0 + (r0_1 + 2048*x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp18 = tmp16 + tmp17
        tmp19 = tmp18.to(tl.float32)
        tmp21 = tmp20.to(tl.float32)
        tmp22 = tmp19 * tmp21
        tmp24 = tmp23.to(tl.float32)
        tmp25 = tmp24 * tmp2
        tmp26 = tl.full([1, 1], 0.00048828125, tl.float32)
        tmp27 = tmp25 * tmp26
        tmp28 = tmp27 * tmp13
        tmp29 = tmp22 - tmp28
        tmp30 = tmp29 * tmp2
        tmp31 = tmp30.to(tl.float32)
        tmp32 = tmp15 + tmp31
        tl.store(out_ptr1 + (r0_1 + 2048*x0), tmp32, r0_mask & xmask)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tb/ctbpadpnuudepm4pxnuqxh5l37bl7fbzkdldcs5qrbcol3pfpu2t.py
# Topologically Sorted Source Nodes: [view_9, view_11, add_5, convert_element_type_25, y, mul_14, sum_2], Original ATen: [aten.view, aten.add, aten._fused_rms_norm_backward, aten._fused_rms_norm]
# Source node to ATen node mapping:
#   add_5 => add_5
#   convert_element_type_25 => convert_element_type_25
#   mul_14 => mul_14
#   sum_2 => sum_2
#   view_11 => view_11
#   view_9 => view_9
#   y => convert_element_type, mul
# Graph fragment:
#   %mm_6 : Tensor "bf16[512, 2048][2048, 1]cuda:0" = PlaceHolder[target=mm_6]
#   %mm_8 : Tensor "bf16[512, 2048][2048, 1]cuda:0" = PlaceHolder[target=mm_8]
#   %primals_2 : Tensor "bf16[2, 256, 2048][524288, 2048, 1]cuda:0" = PlaceHolder[target=primals_2]
#   %rsqrt : Tensor "f32[2, 256, 1][256, 1, 1]cuda:0" = PlaceHolder[target=rsqrt]
#   %view_9 : Tensor "bf16[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_6, [2, 256, 2048]), kwargs = {})
#   %view_11 : Tensor "bf16[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_8, [2, 256, 2048]), kwargs = {})
#   %add_5 : Tensor "bf16[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%view_9, %view_11), kwargs = {})
#   %convert_element_type_25 : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%add_5, torch.float32), kwargs = {})
#   %convert_element_type : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%primals_2, torch.float32), kwargs = {})
#   %mul : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type, %rsqrt), kwargs = {})
#   %mul_14 : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_25, %mul), kwargs = {})
#   %sum_2 : Tensor "f32[2048][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_14, [0, 1]), kwargs = {})
#   return %buf9
triton_red_fused__fused_rms_norm__fused_rms_norm_backward_add_view_2 = async_compile.triton('triton_red_fused__fused_rms_norm__fused_rms_norm_backward_add_view_2', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.reduction(
    size_hints={'x': 8192, 'r0_': 128},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*bf16', 'in_ptr2': '*bf16', 'in_ptr3': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused__fused_rms_norm__fused_rms_norm_backward_add_view_2', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 4, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 6356992, 'r0_': 2048}}
)
@triton.jit
def triton_red_fused__fused_rms_norm__fused_rms_norm_backward_add_view_2(in_ptr0, in_ptr1, in_ptr2, in_ptr3, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 8192
    r0_numel = 128
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = (xindex % 2048)
    x1 = xindex // 2048
    _tmp10 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    x3 = xindex
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_2 = r0_index
        tmp0 = tl.load(in_ptr0 + (x0 + 2048*r0_2 + 262144*x1), r0_mask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp1 = tl.load(in_ptr1 + (x0 + 2048*r0_2 + 262144*x1), r0_mask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp4 = tl.load(in_ptr2 + (x0 + 2048*r0_2 + 262144*x1), r0_mask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp6 = tl.load(in_ptr3 + (r0_2 + 128*x1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp2 = tmp0 + tmp1
        tmp3 = tmp2.to(tl.float32)
        tmp5 = tmp4.to(tl.float32)
        tmp7 = tmp5 * tmp6
        tmp8 = tmp3 * tmp7
        tmp9 = tl.broadcast_to(tmp8, [XBLOCK, R0_BLOCK])
        tmp11 = _tmp10 + tmp9
        _tmp10 = tl.where(r0_mask, tmp11, _tmp10)
    tmp10 = tl.sum(_tmp10, 1)[:, None]
    tl.store(out_ptr0 + (x3), tmp10, None)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/6e/c6emee6uwuiuanyxhrfpvp7f5qe7l6r3w3dyz63vc5xnuks5rxuw.py
# Topologically Sorted Source Nodes: [view_9, view_11, add_5, convert_element_type_25, y, mul_14, sum_2, convert_element_type_29], Original ATen: [aten.view, aten.add, aten._fused_rms_norm_backward, aten._fused_rms_norm]
# Source node to ATen node mapping:
#   add_5 => add_5
#   convert_element_type_25 => convert_element_type_25
#   convert_element_type_29 => convert_element_type_29
#   mul_14 => mul_14
#   sum_2 => sum_2
#   view_11 => view_11
#   view_9 => view_9
#   y => convert_element_type, mul
# Graph fragment:
#   %buf9 : Tensor "f32[2048, 4][1, 2048]cuda:0" = PlaceHolder[target=buf9]
#   %sum_2 : Tensor "f32[2048][1]cuda:0" = PlaceHolder[target=sum_2]
#   %view_9 : Tensor "bf16[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_6, [2, 256, 2048]), kwargs = {})
#   %view_11 : Tensor "bf16[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_8, [2, 256, 2048]), kwargs = {})
#   %add_5 : Tensor "bf16[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%view_9, %view_11), kwargs = {})
#   %convert_element_type_25 : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%add_5, torch.float32), kwargs = {})
#   %convert_element_type : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%primals_2, torch.float32), kwargs = {})
#   %mul : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type, %rsqrt), kwargs = {})
#   %mul_14 : Tensor "f32[2, 256, 2048][524288, 2048, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_25, %mul), kwargs = {})
#   %sum_2 : Tensor "f32[2048][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_14, [0, 1]), kwargs = {})
#   %convert_element_type_29 : Tensor "bf16[2048][1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%sum_2, torch.bfloat16), kwargs = {})
#   return %sum_2,%convert_element_type_29
triton_per_fused__fused_rms_norm__fused_rms_norm_backward_add_view_3 = async_compile.triton('triton_per_fused__fused_rms_norm__fused_rms_norm_backward_add_view_3', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 2048, 'r0_': 4},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr1': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused__fused_rms_norm__fused_rms_norm_backward_add_view_3', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 40960, 'r0_': 0}}
)
@triton.jit
def triton_per_fused__fused_rms_norm__fused_rms_norm_backward_add_view_3(in_ptr0, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 2048
    r0_numel = 4
    R0_BLOCK: tl.constexpr = 4
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
    tmp0 = tl.load(in_ptr0 + (x0 + 2048*r0_1), xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(xmask, tmp1, 0)
    tmp4 = tl.sum(tmp3, 1)[:, None].to(tl.float32)
    tmp5 = tmp4.to(tl.float32)
    tl.store(out_ptr1 + (x0), tmp5, xmask)
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
        primals_1, primals_2, primals_3, primals_4, primals_5, rsqrt, view, mm, mm_1, view_4, tangents_1 = args
        args.clear()
        assert_size_stride(primals_1, (2048, ), (1, ))
        assert_size_stride(primals_2, (2, 256, 2048), (524288, 2048, 1))
        assert_size_stride(primals_3, (5632, 2048), (2048, 1))
        assert_size_stride(primals_4, (5632, 2048), (2048, 1))
        assert_size_stride(primals_5, (2048, 5632), (5632, 1))
        assert_size_stride(rsqrt, (2, 256, 1), (256, 1, 1))
        assert_size_stride(view, (512, 2048), (2048, 1))
        assert_size_stride(mm, (512, 5632), (5632, 1))
        assert_size_stride(mm_1, (512, 5632), (5632, 1))
        assert_size_stride(view_4, (512, 5632), (5632, 1))
        assert_size_stride(tangents_1, (2, 256, 2048), (524288, 2048, 1))
        with torch.cuda._DeviceGuard(0):
            torch.cuda.set_device(0)
            buf0 = empty_strided_cuda((2048, 5632), (5632, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_6, permute_3, mm_3], Original ATen: [aten.view, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(tangents_1, (2048, 512), (1, 2048), 0), view_4, out=buf0)
            del view_4
            buf1 = empty_strided_cuda((512, 5632), (5632, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_6, linear_2, permute_5, mm_4], Original ATen: [aten.view, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(tangents_1, (512, 2048), (2048, 1), 0), primals_5, out=buf1)
            del primals_5
            buf2 = empty_strided_cuda((2, 256, 5632), (1441792, 5632, 1), torch.bfloat16)
            buf5 = reinterpret_tensor(mm_1, (2, 256, 5632), (1441792, 5632, 1), 0); del mm_1  # reuse
            # Topologically Sorted Source Nodes: [view_7, linear, silu, mul_3, linear_1, mul_4, convert_element_type_18, reciprocal, mul_5, mul_6, sub, mul_7, add_4, mul_8, convert_element_type_20], Original ATen: [aten.view, aten._unsafe_view, aten.silu, aten.mul, aten.silu_backward]
            stream0 = get_raw_stream(0)
            triton_poi_fused__unsafe_view_mul_silu_silu_backward_view_0.run(buf5, buf1, mm, buf2, 2883584, stream=stream0)
            del buf1
            del mm
            buf3 = empty_strided_cuda((5632, 2048), (2048, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_7, linear, silu, mul_3, view_8, permute_7, mm_5], Original ATen: [aten.view, aten._unsafe_view, aten.silu, aten.mul, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf2, (5632, 512), (1, 5632), 0), view, out=buf3)
            buf4 = empty_strided_cuda((512, 2048), (2048, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_7, linear, silu, mul_3, view_8, linear_1, permute_9, mm_6], Original ATen: [aten.view, aten._unsafe_view, aten.silu, aten.mul, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf2, (512, 5632), (5632, 1), 0), primals_4, out=buf4)
            del buf2
            del primals_4
            buf6 = empty_strided_cuda((5632, 2048), (2048, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_7, linear, silu, linear_1, mul_4, convert_element_type_18, reciprocal, mul_5, mul_6, sub, mul_7, add_4, mul_8, convert_element_type_20, view_10, permute_11, mm_7], Original ATen: [aten.view, aten._unsafe_view, aten.silu, aten.mul, aten.silu_backward, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf5, (5632, 512), (1, 5632), 0), view, out=buf6)
            del view
            buf7 = empty_strided_cuda((512, 2048), (2048, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_7, linear, silu, linear_1, mul_4, convert_element_type_18, reciprocal, mul_5, mul_6, sub, mul_7, add_4, mul_8, convert_element_type_20, view_10, permute_13, mm_8], Original ATen: [aten.view, aten._unsafe_view, aten.silu, aten.mul, aten.silu_backward, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf5, (512, 5632), (5632, 1), 0), primals_3, out=buf7)
            del buf5
            del primals_3
            buf12 = empty_strided_cuda((2, 256, 2048), (524288, 2048, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_9, view_11, add_5, convert_element_type_25, convert_element_type_27, mul_9, y, mul_11, sum_1, div_1, mul_12, sub_1, mul_13, convert_element_type_28, add_6], Original ATen: [aten.view, aten.add, aten._fused_rms_norm_backward, aten._fused_rms_norm]
            stream0 = get_raw_stream(0)
            triton_red_fused__fused_rms_norm__fused_rms_norm_backward_add_view_1.run(primals_2, rsqrt, buf4, buf7, primals_1, tangents_1, buf12, 512, 2048, stream=stream0)
            del primals_1
            del tangents_1
            buf9 = empty_strided_cuda((2048, 4), (1, 2048), torch.float32)
            # Topologically Sorted Source Nodes: [view_9, view_11, add_5, convert_element_type_25, y, mul_14, sum_2], Original ATen: [aten.view, aten.add, aten._fused_rms_norm_backward, aten._fused_rms_norm]
            stream0 = get_raw_stream(0)
            triton_red_fused__fused_rms_norm__fused_rms_norm_backward_add_view_2.run(buf4, buf7, primals_2, rsqrt, buf9, 8192, 128, stream=stream0)
            del buf4
            del buf7
            del primals_2
            del rsqrt
            buf11 = empty_strided_cuda((2048, ), (1, ), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view_9, view_11, add_5, convert_element_type_25, y, mul_14, sum_2, convert_element_type_29], Original ATen: [aten.view, aten.add, aten._fused_rms_norm_backward, aten._fused_rms_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused__fused_rms_norm__fused_rms_norm_backward_add_view_3.run(buf9, buf11, 2048, 4, stream=stream0)
            del buf9
        return (buf11, buf12, buf6, buf3, buf0, )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    primals_1 = rand_strided((2048, ), (1, ), device='cuda:0', dtype=torch.bfloat16)
    primals_2 = rand_strided((2, 256, 2048), (524288, 2048, 1), device='cuda:0', dtype=torch.bfloat16)
    primals_3 = rand_strided((5632, 2048), (2048, 1), device='cuda:0', dtype=torch.bfloat16)
    primals_4 = rand_strided((5632, 2048), (2048, 1), device='cuda:0', dtype=torch.bfloat16)
    primals_5 = rand_strided((2048, 5632), (5632, 1), device='cuda:0', dtype=torch.bfloat16)
    rsqrt = rand_strided((2, 256, 1), (256, 1, 1), device='cuda:0', dtype=torch.float32)
    view = rand_strided((512, 2048), (2048, 1), device='cuda:0', dtype=torch.bfloat16)
    mm = rand_strided((512, 5632), (5632, 1), device='cuda:0', dtype=torch.bfloat16)
    mm_1 = rand_strided((512, 5632), (5632, 1), device='cuda:0', dtype=torch.bfloat16)
    view_4 = rand_strided((512, 5632), (5632, 1), device='cuda:0', dtype=torch.bfloat16)
    tangents_1 = rand_strided((2, 256, 2048), (524288, 2048, 1), device='cuda:0', dtype=torch.bfloat16)
    return [primals_1, primals_2, primals_3, primals_4, primals_5, rsqrt, view, mm, mm_1, view_4, tangents_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
