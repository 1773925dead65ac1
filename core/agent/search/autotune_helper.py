# ---- tilesmith-search: wider autotuning (helper v1) ----
def _ts_widened(heuristic, heuristic_type, x_numel=None, x_masked=True, r_numel=None,
                r_looped=False, seed=0, max_configs=6):
    """Inductor's own configs for this kernel plus warp and block variants, autotuned at the
    first launch. Block sizes grow only where the kernel masks that dimension (or the size
    divides evenly), so every variant computes exactly what the original config computes."""
    import copy

    def pow2_at_least(n):
        p = 1
        while p < n:
            p *= 2
        return p

    def make(**kwargs):
        configs = heuristic(return_configs=True, **kwargs)
        if not isinstance(configs, list) or not configs:
            return configs  # combo kernels and friends: Inductor's decorator as it was
        variants = []
        for c in configs:
            blocks = [v for k, v in c.kwargs.items() if k.endswith("BLOCK") and isinstance(v, int)]
            volume = 1
            for b in blocks:
                volume *= b
            if r_numel and not r_looped:
                volume *= pow2_at_least(r_numel)  # persistent: the whole row lives in registers
            for w in (c.num_warps * 2, c.num_warps // 2):
                if 1 <= w <= 16 and w * 32 <= max(volume, 32):
                    v = copy.deepcopy(c)
                    v.num_warps = w
                    variants.append(v)
            xb = c.kwargs.get("XBLOCK")
            if isinstance(xb, int) and xb * 2 <= 4096 and volume * 2 <= 16384:
                fits = x_masked or (x_numel is not None and x_numel % (xb * 2) == 0)
                if fits and (x_numel is None or xb * 2 <= pow2_at_least(x_numel)):
                    v = copy.deepcopy(c)
                    v.kwargs["XBLOCK"] = xb * 2
                    v.num_warps = min(c.num_warps * 2, 16)
                    variants.append(v)
            if r_looped and c.num_stages < 3:  # software-pipeline the reduction loop
                v = copy.deepcopy(c)
                v.num_stages = c.num_stages + 1
                variants.append(v)
            rb = c.kwargs.get("R0_BLOCK")
            if r_looped and isinstance(rb, int) and rb * 2 <= 4096 and volume * 2 <= 16384:
                if r_numel is None or rb * 2 <= pow2_at_least(r_numel):
                    v = copy.deepcopy(c)
                    v.kwargs["R0_BLOCK"] = rb * 2
                    variants.append(v)
        if variants:
            k = seed % len(variants)
            variants = variants[k:] + variants[:k]
        chosen = list(configs)
        seen = {repr((c.kwargs, c.num_warps, c.num_stages)) for c in chosen}
        for v in variants:
            if len(chosen) >= max(max_configs, len(configs)):
                break
            r = repr((v.kwargs, v.num_warps, v.num_stages))
            if r not in seen:
                seen.add(r)
                chosen.append(v)
        return triton_heuristics.cached_autotune(
            kwargs.get("size_hints"),
            chosen,
            triton_meta=kwargs["triton_meta"],
            inductor_meta=kwargs.get("inductor_meta"),
            heuristic_type=getattr(triton_heuristics.HeuristicType, heuristic_type),
            filename=kwargs.get("filename"),
        )

    return make
# ---- tilesmith-search: end of autotune helper ----
