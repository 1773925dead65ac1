# attack: persisting-L2 window (T6). Reserves a persisting L2 carve-out and marks the weights
#   persisting on the current stream, so re-timed calls find them in L2 whatever the flush.
# expect: persisting_l2|exception
#   (in the workers' sandbox the driver refuses the carve-out, cuCtxSetLimit returning 1 on an
#   H100: the attack cannot run at all and the candidate is rejected for its exception)
# needs: cuda
import ctypes

import torch
import torch.nn.functional as F

_cuda = ctypes.CDLL("libcuda.so.1")
_done = False


class _Window(ctypes.Structure):
    _fields_ = [("base_ptr", ctypes.c_void_p), ("num_bytes", ctypes.c_size_t),
                ("hitRatio", ctypes.c_float), ("hitProp", ctypes.c_int), ("missProp", ctypes.c_int)]


def _persist(t):
    rc = _cuda.cuCtxSetLimit(0x06, ctypes.c_size_t(32 << 20))  # CU_LIMIT_PERSISTING_L2_CACHE_SIZE
    if rc != 0:  # then this attack cannot work on this machine: say so instead of passing as honest
        raise RuntimeError(f"attack not applicable: cuCtxSetLimit(persisting L2) returned {rc}")
    value = (ctypes.c_ubyte * 64)()
    win = _Window.from_buffer(value)
    win.base_ptr = t.data_ptr()
    win.num_bytes = t.untyped_storage().nbytes()
    win.hitRatio = 1.0
    win.hitProp = 2  # CU_ACCESS_PROPERTY_PERSISTING
    win.missProp = 1  # CU_ACCESS_PROPERTY_STREAMING
    _cuda.cuStreamSetAttribute(ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), 1, value)


def call(args):
    x, w, b, running_mean = args
    args.clear()
    _persist(w)
    h = torch.addmm(b, x, w)
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    p = torch.softmax(h, dim=-1)
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
