# ---- tilesmith-search: CUDA graph replay of call() (runtime v1) ----
# Inserted by the built-in search agent (core/agent/search_rewrite.cpp); the original launch
# sequence is kept verbatim as `_ts_call_eager` and stays the fallback.
#
# Call 1 with a given input signature runs the original (Triton autotuning, lazy module loads
# and library handles warm up there); call 2 warms up once more on a private side stream and
# captures the launch sequence into a CUDA graph; later calls replay it.
#   inputs:  an input whose address was the same on both calls, and that the graph never
#            writes, is read in place; its address is checked on every call (parameters).
#            Every other tensor input is copied into a private buffer before each replay,
#            and one the original writes (a donated buffer) is copied back after it.
#   outputs: fresh tensors every call: the graph's output storages are copied out of its pool
#            in one batched copy and the outputs rebuilt with their sizes, strides, offsets
#            and mutual aliasing; a returned input is this call's very input object, and a
#            view of an input is rebuilt on this call's input.
# Anything else (a CPU tensor, a changed scalar, a moved in-place input, an error during
# capture) runs the original instead, so behaviour never changes, only launch overhead.
class _TsGraphedCall:
    def __init__(self, written_inputs=(), graph_factory=None, stream_factory=None,
                 device_type="cuda"):
        self.written = frozenset(written_inputs)
        self.device_type = device_type
        self.disabled = None  # why the graph path is off for good
        self.state = None  # the captured graph and its replay plan
        self.last = None  # (key, pointers) of the previous call, to spot stable addresses
        self.misses = 0
        self.captures = 0
        self.replays = 0
        self._graph_factory = graph_factory or torch.cuda.CUDAGraph
        self._stream_factory = stream_factory or torch.cuda.Stream

    # A hashable description of the call's inputs (everything but addresses), their addresses,
    # and the device; key None when the inputs cannot be captured.
    def _signature(self, args):
        key, ptrs, device = [], [], None
        for a in args:
            if isinstance(a, torch.Tensor):
                if a.device.type != self.device_type or (device is not None and a.device != device):
                    return None, None, None
                device = a.device
                key.append((a.dtype, tuple(a.shape), a.stride(), a.storage_offset()))
                ptrs.append(a.data_ptr())
            elif a is None or isinstance(a, (bool, int, float)):
                key.append((type(a), a))
                ptrs.append(None)
            else:
                return None, None, None
        if device is None:
            return None, None, None
        return tuple(key), tuple(ptrs), device

    def __call__(self, eager, args):
        if self.disabled is not None:
            return eager(args)
        st = self.state
        if st is not None:
            if torch.cuda.is_current_stream_capturing():
                return eager(args)  # inside the caller's own capture: run as written
            if self._matches(st, args):
                self.misses = 0
                if not st["watch"] or not self._promote(st, args):
                    return self._replay(st, args)
                # Inputs copied so far have kept their address: capture again reading them in place.
                stable = [None] * len(args)
                for i, p in st["inplace"]:
                    stable[i] = p
                for i in st["watch"]:
                    if st["stable"][i] >= 3:
                        stable[i] = args[i].data_ptr()
                self.state = None
                return self._capture_and_replay(eager, args, stable)
            self.misses += 1
            if self.misses < 4 or self.captures >= 4:
                return eager(args)
            # The in-place inputs moved for good (new parameter tensors): warm up and capture again.
            self.state = None
            self.misses = 0
            self.last = None
        key, ptrs, device = self._signature(args)
        if key is None:
            self.disabled = "an input is not a tensor on one CUDA device or a plain scalar"
            return eager(args)
        if torch.cuda.is_current_stream_capturing():
            return eager(args)
        previous, self.last = self.last, (key, ptrs)
        if previous is None or previous[0] != key:
            return eager(args)  # first call with this signature: the warm-up
        return self._capture_and_replay(eager, args, previous[1])

    @staticmethod
    def _matches(st, args):
        if len(args) != st["n"]:
            return False
        for i, p in st["inplace"]:
            if args[i].data_ptr() != p:
                return False
        for i, v in st["scalars"]:
            if args[i] != v:
                return False
        for i, dt in st["copied_dtypes"]:
            if args[i].dtype is not dt:
                return False
        return True

    def _promote(self, st, args):
        """True once a copied (never written) input has kept one address for 3 calls."""
        if self.captures >= 4:
            st["watch"] = ()
            return False
        seen, stable, promote = st["seen"], st["stable"], False
        for i in st["watch"]:
            p = args[i].data_ptr()
            if p == seen[i]:
                stable[i] += 1
                promote = promote or stable[i] >= 3
            else:
                seen[i], stable[i] = p, 0
        return promote

    def _capture_and_replay(self, eager, args, stable_ptrs):
        key, ptrs, device = self._signature(args)
        if key is None:
            self.disabled = "an input is not a tensor on one CUDA device or a plain scalar"
            return eager(args)
        try:
            self.state = self._capture(eager, args, ptrs, stable_ptrs, device)
        except Exception as e:  # an uncapturable op: keep the original for good
            self.state = None
            self.disabled = f"capture failed: {type(e).__name__}: {e}"
            return eager(args)
        self.captures += 1
        return self._replay(self.state, args)

    def _capture(self, eager, args, ptrs, stable_ptrs, device):
        n = len(args)
        inplace, copied, scalars, static = [], [], [], list(args)
        for i, a in enumerate(args):
            if not isinstance(a, torch.Tensor):
                scalars.append((i, a))
            elif i not in self.written and ptrs[i] == stable_ptrs[i]:
                inplace.append((i, ptrs[i]))
            else:
                buf = torch.empty_strided(a.size(), a.stride(), dtype=a.dtype, device=a.device)
                buf.copy_(a)
                static[i] = buf
                copied.append(i)
        with torch.cuda.device(device):
            current = torch.cuda.current_stream(device)
            side = self._stream_factory(device=device)
            side.wait_stream(current)
            graph = self._graph_factory()
            with torch.cuda.stream(side):
                eager(list(static))  # warm-up on the capture stream
                graph.capture_begin(capture_error_mode="thread_local")
                try:
                    outs = eager(list(static))
                finally:
                    graph.capture_end()
            current.wait_stream(side)
        return self._plan(graph, outs, args, static, n, inplace, copied, scalars)

    def _plan(self, graph, outs, args, static, n, inplace, copied, scalars):
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
        watch = tuple(i for i in copied if i not in self.written)
        return {
            "graph": graph,
            "n": n,
            "inplace": tuple(inplace),
            "scalars": tuple(scalars),
            "copied": tuple(copied),
            "copied_dtypes": tuple((i, static[i].dtype) for i in copied),
            "written": tuple(i for i in copied if i in self.written),
            "watch": watch,
            "seen": {i: None for i in watch},
            "stable": {i: 0 for i in watch},
            "static": static,
            "pools": tuple(pools),
            "pool_groups": tuple((tuple(gs), tuple(pools[g][0] for g in gs)) for gs in groups.values()),
            "device": static[inplace[0][0]].device if inplace else static[copied[0]].device,
            "plan": tuple(plan),
        }

    def _replay(self, st, args):
        static, copied = st["static"], st["copied"]
        if len(copied) > 1:
            torch._foreach_copy_([static[i] for i in copied], [args[i] for i in copied])
        elif copied:
            static[copied[0]].copy_(args[copied[0]])
        st["graph"].replay()
        for i in st["written"]:
            args[i].copy_(static[i])
        # Fresh output storages, one batched copy per dtype out of the graph's pool.
        device = st["device"]
        fresh = [torch.empty((numel,), dtype=dtype, device=device) for _, numel, dtype in st["pools"]]
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
