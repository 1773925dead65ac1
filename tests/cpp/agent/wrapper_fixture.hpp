// A small Inductor CUDA wrapper (torch 2.11 layout) used by the structure and agent tests.
#pragma once

#include <string>

namespace ts::agent::testing {

inline const std::string kWrapper = R"PY(# AOT ID: ['0_inference']
import torch
from torch._inductor.runtime.triton_heuristics import grid
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
assert_size_stride = torch._C._dynamo.guards.assert_size_stride
from torch._C import _cuda_getCurrentRawStream as get_raw_stream
async_compile = AsyncCompile()

# kernel path: /tmp/torchinductor/ab/cab.py
triton_poi_fused_add_relu_0 = async_compile.triton('triton_poi_fused_add_relu_0', '''
@triton.jit
def triton_poi_fused_add_relu_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    tmp0 = tl.load(in_ptr0 + xindex)
    tl.store(out_ptr0 + xindex, tl.maximum(tmp0 + 1.0, 0.0))
''', device_str='cuda')

async_compile.wait(globals())
del async_compile

def call(args):
    arg0_1, arg1_1 = args
    args.clear()
    assert_size_stride(arg0_1, (1024, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf0 = empty_strided_cuda((1024, ), (1, ), torch.float32)
        stream0 = get_raw_stream(0)
        triton_poi_fused_add_relu_0.run(arg0_1, buf0, 1024,
                                        grid=grid(1024), stream=stream0)
        buf1 = extern_kernels.mm(buf0, arg1_1)
        del buf0
    return (buf1, arg0_1, )
)PY";

/// `from` replaced by `to` once (the fixture's variants).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

}  // namespace ts::agent::testing
