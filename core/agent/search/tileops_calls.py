# ---- tilesmith-search: TileOPs calls (helper v1) ----
# Inserted by the built-in search agent (core/agent/search_rewrite.cpp). Each rewritten line of
# call() computes its op with this project's TileOPs library (matrix product, SDPA attention,
# RMSNorm, LayerNorm, softmax, SiLU-and-mul), writing into the very buffer Inductor allocated for
# it. A call the library does not cover (a dtype, layout or shape the op's spec refuses, or an
# installation without built kernels) runs the original launch instead, so the candidate is
# never wrong for lack of coverage; the gate decides whether it is faster.
try:
    from tileops import KernelsNotBuilt as _TsKernelsNotBuilt
    from tileops.manifest import BindError as _TsBindError
    from tileops.ops import GEMMFwdOp as _TsGEMM
    from tileops.ops import LayerNormFwdOp as _TsLayerNorm
    from tileops.ops import MultiHeadAttentionFwdOp as _TsAttention
    from tileops.ops import RMSNormFwdOp as _TsRMSNorm
    from tileops.ops import SiluAndMulFwdOp as _TsSiluAndMul
    from tileops.ops import SoftmaxFwdOp as _TsSoftmax
    _TS_TILEOPS = True
except ImportError:  # no TileOPs here: every call runs its original
    _TS_TILEOPS = False


class _TsTileOpsCalls:
    # Refusals of the op layer before anything is launched: not covered, run the original.
    MAX_REFUSED = 64  # signatures remembered as not covered

    def __init__(self):
        self.ops = {}  # (class, params) -> op instance
        self.refused = set()  # call signatures the library refused
        self.not_covered = (_TsBindError, _TsKernelsNotBuilt, ValueError,
                            TypeError) if _TS_TILEOPS else ()

    def _op(self, cls, **params):
        key = (cls, tuple(params.items()))
        op = self.ops.get(key)
        if op is None:
            op = self.ops[key] = cls(**params)
        return op

    @staticmethod
    def _signature(tag, tensors):
        return (tag,) + tuple((t.dtype, t.device, tuple(t.shape), t.stride()) if t is not None
                              else None for t in tensors)

    def _run(self, tag, make_op, outputs, inputs):
        """True when TileOPs computed the call into `outputs`; False when it is not covered."""
        if not _TS_TILEOPS:
            return False
        signature = self._signature(tag, tuple(outputs) + tuple(inputs))
        if signature in self.refused:
            return False
        try:
            make_op().run_into(outputs, *inputs)
            return True
        except self.not_covered:
            if len(self.refused) < self.MAX_REFUSED:
                self.refused.add(signature)
            return False

    # -- library calls ----------------------------------------------------------------------

    def mm(self, a, b, *, out):
        """extern_kernels.mm(a, b, out=out): a [M, K] @ b [K, N], either stored row- or
        column-major (a column-major b is nn.Linear's weight [N, K], the GEMM's trans_b)."""
        stored = []
        for m in (a, b):
            if m.dim() != 2:
                stored = None
                break
            if m.stride(1) == 1 or m.shape[1] == 1:
                stored.append((m, False))
            elif m.stride(0) == 1 or m.shape[0] == 1:
                stored.append((m.t(), True))
            else:
                stored = None
                break
        if stored is not None:  # each as the GEMM's (stored matrix, trans) pair
            (sa, ta), (sb, tb) = stored
            if self._run("mm", lambda: self._op(_TsGEMM, trans_a=ta, trans_b=tb), (out,),
                         (sa, sb)):
                return
        extern_kernels.mm(a, b, out=out)

    def attention(self, size, stride, op, *args, **kwargs):
        """An aten._scaled_dot_product_*_attention call of which only the output (element 0) is
        used, as the tuple (o,), o laid out as `size`/`stride` (what call() asserts of it)."""
        names = [a.name for a in op._schema.arguments]
        bound = {a.name: a.default_value for a in op._schema.arguments if a.has_default_value()}
        bound.update(zip(names, args))
        bound.update(kwargs)
        q, k, v = bound.get("query"), bound.get("key"), bound.get("value")
        # Anything beyond q, k, v, causality and scale (a bias or mask, dropout, a debug mask)
        # must be off; the logsumexp a backward would need is never read (call() uses only o).
        extra = {n: x for n, x in bound.items()
                 if n not in ("query", "key", "value", "is_causal", "scale", "compute_log_sumexp")}
        if all(x is None or (isinstance(x, (bool, int, float)) and not x)
               for x in extra.values()) and isinstance(q, torch.Tensor):
            o = torch.empty_strided(size, stride, dtype=q.dtype, device=q.device)
            is_causal, scale = bool(bound.get("is_causal")), bound.get("scale")
            if self._run("attention", lambda: self._op(_TsAttention, is_causal=is_causal,
                                                       scale=scale), (o,), (q, k, v)):
                return (o,)
        return op(*args, **kwargs)

    # -- Triton kernels Inductor generated: `kernel.run(*args, stream=stream)` ---------------

    @staticmethod
    def _rows(tensors, rows, n):
        """(x, vectors): x the one tensor of rows * n elements and last dim n, the rest of n
        elements in launch order; None when that is ambiguous (a single row) or not the case."""
        if rows <= 1:
            return None
        xs = [t for t in tensors if t.numel() == rows * n and t.dim() and t.shape[-1] == n]
        vectors = [t for t in tensors if t.numel() == n]
        if len(xs) != 1 or len(vectors) != len(tensors) - 1:
            return None
        return xs[0], vectors

    @staticmethod
    def _shaped_like(out, x):
        return out.view(x.shape) if out.is_contiguous() and out.numel() == x.numel() else None

    def _norm(self, tag, make_op, kernel, args, stream, ins, out, rows, n, max_vectors):
        found = self._rows([args[i] for i in ins], rows, n)
        if found is not None and len(found[1]) <= max_vectors:
            x, vectors = found
            y = self._shaped_like(args[out], x)
            if y is not None and self._run(tag, make_op, (y,), (x, *vectors)):
                return
        kernel.run(*args, stream=stream)

    def rms_norm(self, kernel, args, stream, *, ins, out, rows, n, eps):
        self._norm("rms_norm", lambda: self._op(_TsRMSNorm, eps=eps), kernel, args, stream, ins,
                   out, rows, n, 1)

    def layer_norm(self, kernel, args, stream, *, ins, out, rows, n, eps):
        self._norm("layer_norm", lambda: self._op(_TsLayerNorm, eps=eps), kernel, args, stream,
                   ins, out, rows, n, 2)

    def softmax(self, kernel, args, stream, *, ins, out, rows, n):
        self._norm("softmax", lambda: self._op(_TsSoftmax), kernel, args, stream, ins, out, rows,
                   n, 0)

    def silu_and_mul(self, kernel, args, stream, *, ins, out):
        """silu(x[..., :N]) * x[..., N:] for one input x [*, 2N] and the output [*, N]."""
        (x,), y = [args[i] for i in ins], args[out]
        if (y.dim() and y.shape[-1] and x.is_contiguous() and y.is_contiguous()
                and x.numel() == 2 * y.numel()):
            n = y.shape[-1]
            if self._run("silu_and_mul", lambda: self._op(_TsSiluAndMul), (y.view(-1, n),),
                         (x.view(-1, 2 * n),)):
                return
        kernel.run(*args, stream=stream)


_ts_tileops = _TsTileOpsCalls()
# ---- tilesmith-search: end of TileOPs calls ----
