# ---- tilesmith-search: direct Triton launches (helper v1) ----
# Inserted by the built-in search agent (core/agent/search_rewrite.cpp). Inductor launches each
# Triton kernel through CachingAutotuner.run(), which on every launch looks up the debug mode,
# registers Triton's allocator again and checks for autotuning, coordinate descent, cubin saving,
# launch dumps and the profiler before it calls the kernel's one compiled launcher: host time
# that a launch-bound call() pays per kernel. Once a first call has settled all of that, call()
# invokes the launchers directly, with the same arguments. While the profiler or a debug mode
# watches, or while any kernel does not qualify, the original call() runs (kept verbatim).
try:
    from torch.utils._debug_mode import get_active_debug_mode as _ts_active_debug_mode
except ImportError:  # a torch without debug modes
    def _ts_active_debug_mode():
        return None
from torch._inductor.runtime.triton_heuristics import CachingAutotuner as _TsAutotuner

# The run() implementations whose only work once settled is the launcher call; a subclass with
# its own run() (DebugAutotuner measures every launch) keeps it.
_TS_PLAIN_RUNS = {_TsAutotuner.run}


def _ts_direct_launchers(kernels):
    """Each kernel's one compiled launcher, or None while run() still has work to do for any."""
    out = []
    for kernel in kernels:
        launchers = getattr(kernel, "launchers", None)
        if not isinstance(launchers, list) or len(launchers) != 1:
            return None  # not compiled yet, or several configs still to autotune
        if getattr(type(kernel), "run", None) not in _TS_PLAIN_RUNS:
            return None
        launcher = launchers[0]
        meta = getattr(kernel, "inductor_meta", None) or {}
        if (getattr(kernel, "triton_interpret", False)
                or getattr(kernel, "dump_launch_params", False)
                or getattr(kernel, "dump_launch_tensors", False)
                or (meta.get("coordinate_descent_tuning", False)
                    and not getattr(getattr(launcher, "config", None), "found_by_coordesc", False))
                or (getattr(launcher, "store_cubin", False)
                    and not getattr(kernel, "cuda_kernel_saved", False))
                # scratch memory comes from the allocator run() registers on each launch
                or getattr(launcher, "global_scratch", None)
                or getattr(launcher, "profile_scratch", None)):
            return None
        out.append(launcher)
    return out


def _ts_launch_observed():
    """Whether launches must go through run(): the profiler records them, or a debug mode does."""
    return torch.autograd.profiler._is_profiler_enabled or _ts_active_debug_mode() is not None
# ---- tilesmith-search: end of direct launch helper ----
