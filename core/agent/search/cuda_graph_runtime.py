# ---- tilesmith-search: CUDA graph replay of call() (runtime v4) ----
# Inserted by the built-in search agent (core/agent/search_rewrite.cpp); the original launch
# sequence is kept verbatim as `_ts_call_eager` and stays the fallback.
#
# The first call runs the original (Triton autotuning, lazy module loads and library handles
# warm up there). Later calls replay a CUDA graph of the launch sequence, captured on a private
# side stream after one more warm-up there:
#   inputs:  an input the graph never writes and that is stable (at an address it had in one of
#            its last 3 calls, and at no more than 3 addresses over its last 8: a parameter, a
#            reused buffer, a few buffers in rotation) is read in place; the graph is used only while it is at that address again. Every other tensor
#            input is copied into a private buffer before the replay, and one the original writes
#            (a donated buffer) is copied back after it. A few graphs are kept (most recently
#            used first, one memory pool); each call replays the one reading the most inputs in
#            place, and captures a new one only when an input it copies has become stable, so
#            addresses that never repeat cost a copy, not a capture per call.
#            Once a graph reads every tensor input of a call in place, calls at those very
#            addresses replay it directly (`settled`), skipping the address bookkeeping.
#            Captures are paced: one that only reads more inputs in place (a graph already fits)
#            waits CAPTURE_GAP calls after the last capture, and a call no graph fits inside that
#            gap captures a conservative graph, reading in place only inputs that have had one
#            address all along, which later calls then fit. Inputs rotating among a few buffers
#            out of step with each other (a training step's saved activations, shuffled further
#            by the in-place check's alternation) otherwise fit no earlier graph and captured on
#            nearly every call: why a transformer block's backward, confirmed at 3.4x by the
#            gate, timed 6.7x slower in place (H100); paced, the same graph timed
#            1.98x faster than Inductor in place (H100).
#   outputs: fresh tensors every call, never storage that anything still holds. Each graph
#            has up to HANDOUTS extra captures of the same launch sequence whose output storages
#            are handed out as they are: one is replayed only when nothing outside the runtime
#            holds any of its output storages any more (their use count is back to what the
#            runtime's own references make it, on the stream it last ran on), so `y = f(x)` in a
#            loop alternates between two of them and copies nothing. When every one is held, the
#            first capture runs and its outputs are copied out of its pool in one batched copy per
#            dtype. Either way the outputs are rebuilt with their sizes, strides, offsets and
#            mutual aliasing; a returned input is this call's very input object, and a view of
#            an input is rebuilt on this call's input.
# Anything else (a CPU tensor, another input signature, an error during capture) runs the
# original instead, so behaviour never changes, only launch overhead.
def _ts_clear_cublas_workspaces():
    clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear is not None and torch.cuda.is_available():
        clear()


class _TsGraphedCall:
    MAX_GRAPHS = 6  # kept at once (least recently used dropped)
    MAX_CAPTURES = 16  # graphs over the module's life; then only the graphs it has
    CAPTURE_GAP = 8  # calls between captures, unless no graph fits (then a conservative one)
    HANDOUTS = 2  # extra captures per graph whose outputs are handed out without a copy
    HANDOUT_MAX_BYTES = 1 << 30  # each keeps its own outputs resident: only for smaller outputs
    RECENT = 8  # addresses remembered per input (its last calls)
    ROTATION = 3  # stable: at most this many distinct addresses among them, this one recent

    def __init__(self, written_inputs=(), graph_factory=None, stream_factory=None,
                 device_type="cuda", clear_workspaces=None):
        self.written = frozenset(written_inputs)
        self.device_type = device_type
        self.disabled = None  # why the graph path is off for good
        self.key = None  # the input signature (everything but addresses) of the first call
        self.device = None
        self.recent = None  # per input: its addresses in the last RECENT calls
        self.graphs = []  # replay plans, most recently used first
        self.pool = None  # the memory pool the graphs share
        self.captures = 0  # graphs captured (the extra captures of each: handout_captures)
        self.handout_captures = 0
        self.replays = 0
        self.calls = 0  # calls after the warm-up
        self.last_capture = None  # self.calls at the last capture
        self.eager_calls = {}  # why a call ran the original: reason -> calls (diagnostics)
        self.settled = {}  # input addresses -> the graph reading every tensor input there in place
        self._graph_factory = graph_factory or torch.cuda.CUDAGraph
        self._stream_factory = stream_factory or torch.cuda.Stream
        self._clear_workspaces = clear_workspaces or _ts_clear_cublas_workspaces

    @property
    def state(self):  # the most recently used graph's plan
        return self.graphs[0] if self.graphs else None

    # A hashable description of the call's inputs (everything but addresses), their addresses,
    # and the device; key None when the inputs cannot be captured.
    def _signature(self, args):
        key, ptrs, device = [], [], None
        for a in args:
            if isinstance(a, torch.Tensor):
                d = a.device
                if device is None:
                    if d.type != self.device_type:
                        return None, None, None
                    device = d
                elif d != device:
                    return None, None, None
                # No storage offset: a copied input lands in its own buffer and an in-place one
                # is matched by address, so a slice at another offset is the same call.
                key.append((a.dtype, a.shape, a.stride()))
                ptrs.append(a.data_ptr())
            elif a is None or isinstance(a, (bool, int, float)):
                key.append((type(a), a))
                ptrs.append(None)
            else:
                return None, None, None
        if device is None:
            return None, None, None
        return tuple(key), tuple(ptrs), device

    def _eager(self, reason, eager, args):
        self.eager_calls[reason] = self.eager_calls.get(reason, 0) + 1
        return eager(args)

    def __call__(self, eager, args):
        if self.disabled is not None:
            return self._eager("disabled", eager, args)
        if self.key is None:  # the first call: the warm-up
            key, ptrs, device = self._signature(args)
            if key is None:
                self.disabled = "an input is not a tensor on one CUDA device or a plain scalar"
                return self._eager("disabled", eager, args)
            self.key, self.device = key, device
            self.recent = [[] for _ in args]
            self.seen = [{} for _ in args]  # per input: address -> times among its recent ones
            self._remember(ptrs)
            return self._eager("warm-up", eager, args)
        if torch.cuda.is_current_stream_capturing():
            return self._eager("caller capturing", eager, args)  # run as written
        key, ptrs, device = self._signature(args)
        if key != self.key:  # another signature (a scalar, a dtype): not these graphs' call
            return self._eager("another signature", eager, args)
        # Every tensor input where a graph reads it in place (parameters, a reused buffer, a few
        # in rotation): nothing to decide, and nothing the address history could improve.
        g = self.settled.get(ptrs)
        if g is not None:
            if g is not self.graphs[0]:
                self.graphs.remove(g)
                self.graphs.insert(0, g)
            return self._replay(g, args, eager)
        # Stable: never written, at an address it had in one of its last ROTATION calls, and over
        # its last RECENT calls at no more than ROTATION addresses (a parameter, a buffer reused
        # each step, a few in rotation); an input at ever new or scattered addresses is copied.
        # Fixed: stable, and at this one address in every remembered call.
        stable, fixed = [None] * len(ptrs), [None] * len(ptrs)
        for i, p in enumerate(ptrs):
            if (p is not None and i not in self.written and len(self.seen[i]) <= self.ROTATION
                    and p in self.recent[i][-self.ROTATION:]):
                stable[i] = p
                if len(self.seen[i]) == 1:
                    fixed[i] = p
        self._remember(ptrs)
        self.calls += 1
        paced = self.last_capture is not None and self.calls - self.last_capture < self.CAPTURE_GAP
        # The first graph (most recently used first) that fits this call and copies no stable
        # input; failing that, the fitting one that reads most inputs in place.
        best, settled = None, False
        for g in self.graphs:
            if not self._matches(g, args):
                continue
            if not any(stable[i] is not None for i in g["copied"]):
                best, settled = g, True
                break
            if best is None or len(g["inplace"]) > len(best["inplace"]):
                best = g
        if best is not None:
            if best is not self.graphs[0]:
                self.graphs.remove(best)
                self.graphs.insert(0, best)
            if settled and not best["copied"]:
                self.settled[ptrs] = best
            if settled or paced or self.captures >= self.MAX_CAPTURES:
                return self._replay(best, args, eager)
        elif self.captures >= self.MAX_CAPTURES:
            return self._eager("capture budget spent", eager, args)
        try:
            g = self._capture(eager, args, ptrs, fixed if best is None and paced else stable,
                              device)
        except Exception as e:  # an uncapturable op: keep the original for good
            self.graphs = []
            self.settled.clear()
            self.disabled = f"capture failed: {type(e).__name__}: {e}"
            return self._eager("disabled", eager, args)
        self.captures += 1
        self.last_capture = self.calls
        self.graphs.insert(0, g)
        for dropped in self.graphs[self.MAX_GRAPHS:]:
            self.settled = {k: v for k, v in self.settled.items() if v is not dropped}
        del self.graphs[self.MAX_GRAPHS:]
        return self._replay(g, args, eager)

    def _remember(self, ptrs):
        for recent, seen, p in zip(self.recent, self.seen, ptrs):
            if seen.get(p) == self.RECENT:
                continue  # its last RECENT calls were all at p: appending p changes nothing
            recent.append(p)
            seen[p] = seen.get(p, 0) + 1
            if len(recent) > self.RECENT:
                old = recent.pop(0)
                if seen[old] == 1:
                    del seen[old]
                else:
                    seen[old] -= 1

    @staticmethod
    def _matches(g, args):
        if len(args) != g["n"]:
            return False
        for i, p, dt in g["inplace_checks"]:
            a = args[i]
            if a.data_ptr() != p or a.dtype is not dt:
                return False
        for i, v in g["scalars"]:
            if args[i] != v:
                return False
        for i, dt in g["copied_dtypes"]:
            if args[i].dtype is not dt:
                return False
        return True

    def _capture(self, eager, args, ptrs, stable_ptrs, device):
        n = len(args)
        inplace, copied, scalars, static = [], [], [], list(args)
        for i, a in enumerate(args):
            if not isinstance(a, torch.Tensor):
                scalars.append((i, a))
            elif i not in self.written and stable_ptrs[i] is not None and ptrs[i] == stable_ptrs[i]:
                inplace.append((i, ptrs[i]))
            else:
                buf = torch.empty_strided(a.size(), a.stride(), dtype=a.dtype, device=a.device)
                buf.copy_(a)
                static[i] = buf
                copied.append(i)
        graph, outs = self._record(eager, static, device)
        return self._plan(graph, outs, static, n, inplace, copied, scalars)

    def _record(self, eager, static, device):
        """One warm-up of the launch sequence on a side stream, then its capture there."""
        with torch.cuda.device(device):
            current = torch.cuda.current_stream(device)
            side = self._stream_factory(device=device)
            side.wait_stream(current)
            graph = self._graph_factory()
            with torch.cuda.stream(side):
                eager(list(static))  # warm-up on the capture stream
                # cuBLAS keeps one workspace per stream, allocated on first use (here: in the
                # warm-up, outside the graph's pool) and baked into the captured matmuls. Anyone
                # may free it later (torch's own CUDA graphs clear every workspace around each
                # recording), and replays would then write into memory handed to other tensors:
                # seen on the H200 as an illegal address next to a reduce-overhead graph. Cleared
                # before capture, the workspace is allocated inside the graph's pool (scratch, as
                # the graphs sharing it replay one at a time); cleared after, no eager matmul on
                # this stream can pick that pool memory up.
                self._clear_workspaces()
                if self.pool is None:
                    graph.capture_begin(capture_error_mode="thread_local")
                else:
                    graph.capture_begin(pool=self.pool, capture_error_mode="thread_local")
                try:
                    outs = eager(list(static))
                finally:
                    graph.capture_end()
                    self._clear_workspaces()
            current.wait_stream(side)
        if self.pool is None:
            self.pool = graph.pool()
        return graph, outs

    def _plan(self, graph, outs, static, n, inplace, copied, scalars):
        # Where each output lives: an input, a view of an input, or the graph's pool.
        input_storages = {}
        for i, s in enumerate(static):
            if isinstance(s, torch.Tensor):
                input_storages.setdefault(s.untyped_storage().data_ptr(), i)
        pools, pool_index, plan = [], {}, []  # pools: (flat static view, numel, dtype)
        for k, o in enumerate(outs):
            if not isinstance(o, torch.Tensor):
                plan.append(("const", o))
                continue
            twin = next((j for j in range(k) if outs[j] is o), None)
            if twin is not None:  # the very same tensor returned twice
                plan.append(("same", twin))
                continue
            hit = next((i for i, s in enumerate(static) if s is o), None)
            if hit is not None:
                plan.append(("input", hit))
                continue
            storage = o.untyped_storage()
            storage_ptr = storage.data_ptr()
            if storage_ptr in input_storages:
                i = input_storages[storage_ptr]
                base = static[i]
                if o.dtype != base.dtype:
                    raise RuntimeError("an output reinterprets an input with another dtype")
                plan.append(("view", i, tuple(o.shape), o.stride(),
                             o.storage_offset() - base.storage_offset()))
                continue
            if storage_ptr not in pool_index:
                if storage.nbytes() % o.element_size():
                    raise RuntimeError("an output storage does not hold whole elements")
                flat = torch.empty((0,), dtype=o.dtype, device=o.device)
                flat.set_(storage)
                pool_index[storage_ptr] = len(pools)
                pools.append((flat, flat.numel(), o.dtype))
            g = pool_index[storage_ptr]
            view = None if o.dtype == pools[g][2] else o.dtype
            plan.append(("pool", g, view, tuple(o.shape), o.stride(), o.storage_offset()))
        groups = {}
        for g, (_, _, dtype) in enumerate(pools):
            groups.setdefault(dtype, []).append(g)
        return {
            "graph": graph,
            "n": n,
            "inplace": tuple(inplace),
            "scalars": tuple(scalars),
            "copied": tuple(copied),
            "copied_dtypes": tuple((i, static[i].dtype) for i in copied),
            "written": tuple(i for i in copied if i in self.written),
            "inplace_checks": tuple((i, p, static[i].dtype) for i, p in inplace),
            "static": static,
            "pools": tuple(pools),
            "pool_groups": tuple((tuple(gs), tuple(pools[g][0] for g in gs)) for gs in groups.values()),
            "device": static[inplace[0][0]].device if inplace else static[copied[0]].device,
            "plan": tuple(plan),
            "out_bytes": sum(numel * flat.element_size() for flat, numel, _ in pools),
            "handouts": [],  # the extra captures (_handout)
        }

    # An extra capture of `st`'s launch sequence whose output storages are handed out as they
    # are, or None when there is none free and no more may be made. Captured before this call's
    # inputs are copied in: the warm-up runs on the static inputs as `st`'s capture did.
    def _handout(self, st, eager):
        stream = getattr(torch.cuda.current_stream(st["device"]), "cuda_stream", None)
        use_count = torch._C._storage_Use_Count
        for h in st["handouts"]:
            if h["stream"] == stream:
                for r, n in h["counts"]:
                    if use_count(r.cdata) != n:
                        break
                else:
                    return h
        if (len(st["handouts"]) >= self.HANDOUTS or st["out_bytes"] > self.HANDOUT_MAX_BYTES
                or st.get("no_handout")):
            return None
        try:
            graph, outs = self._record(eager, list(st["static"]), st["device"])
            twin = self._plan(graph, outs, st["static"], st["n"], st["inplace"], st["copied"],
                              st["scalars"])
        except Exception:  # a second capture failed: keep copying out of the first one
            st["no_handout"] = True
            return None
        self.handout_captures += 1
        del outs
        if twin["plan"] != st["plan"] or [p[1:] for p in twin["pools"]] != [p[1:] for p in st["pools"]]:
            st["no_handout"] = True  # another layout of outputs: not the same launch sequence
            return None
        from torch.multiprocessing.reductions import StorageWeakRef

        refs = [StorageWeakRef(flat.untyped_storage()) for flat, _, _ in twin["pools"]]
        h = {"graph": graph, "pools": twin["pools"], "stream": stream,
             # each storage with the use count the runtime's own references (the flat views) make
             "counts": [(r, use_count(r.cdata)) for r in refs]}
        st["handouts"].append(h)
        return h

    def _replay(self, st, args, eager):
        static, copied = st["static"], st["copied"]
        h = self._handout(st, eager) if st["pools"] else None
        if len(copied) > 1:
            torch._foreach_copy_([static[i] for i in copied], [args[i] for i in copied])
        elif copied:
            static[copied[0]].copy_(args[copied[0]])
        (h or st)["graph"].replay()
        for i in st["written"]:
            args[i].copy_(static[i])
        if h is not None:  # nothing else holds these storages: hand them out as they are
            fresh = [flat for flat, _, _ in h["pools"]]
        else:  # fresh output storages, one batched copy per dtype out of the graph's pool
            device = st["device"]
            fresh = [torch.empty((numel,), dtype=dtype, device=device)
                     for _, numel, dtype in st["pools"]]
            for gs, sources in st["pool_groups"]:
                if len(gs) > 1:
                    torch._foreach_copy_([fresh[g] for g in gs], list(sources))
                else:
                    fresh[gs[0]].copy_(sources[0])
        out = []
        reinterpret = torch._C._dynamo.guards._reinterpret_tensor
        for entry in st["plan"]:
            kind = entry[0]
            if kind == "pool":
                _, g, view, size, stride, offset = entry
                base = fresh[g] if view is None else fresh[g].view(view)
                out.append(reinterpret(base, size, stride, offset))
            elif kind == "input":
                out.append(args[entry[1]])
            elif kind == "view":
                _, i, size, stride, offset = entry
                out.append(reinterpret(args[i], size, stride, offset))
            elif kind == "same":
                out.append(out[entry[1]])
            else:
                out.append(entry[1])
        args.clear()
        self.replays += 1
        return out
# ---- tilesmith-search: end of CUDA graph runtime ----
