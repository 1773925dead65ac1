"""Every candidate the search agent writes for the fixture wrappers must compile as Python.

usage: check_search_candidates.py SEARCH_REWRITE_EXE DATA_DIR

For each fixture and each rewrite combination, runs the rewrite tool and checks that the module
parses, that every Triton kernel source inside `async_compile.triton('...', '''...''')` parses,
that the ABI markers survive (one `def call(`, the same unpack line, `args.clear()`, the same
return arity) and that each rewrite left its own marker. A refused rewrite (exit 2) is fine only
where the fixture gives a reason to refuse (listed in EXPECTED_REFUSALS).
"""

import ast
import os
import re
import subprocess
import sys
import tempfile

COMBINATIONS = ["cuda_graph", "autotune", "cuda_graph,autotune", "autotune,cuda_graph", "tileops",
                "tileops,cuda_graph"]
# Fixtures where a rewrite is expected to be refused, and a word of the reason.
EXPECTED_REFUSALS = {
    # fp32 graphs, and an MLP of addmm (bias) calls: nothing TileOPs covers
    (name, combo): "no bf16/fp16 matrix product"
    for name in ["conv_fp32.0.inference.py", "mlp_bf16.0.inference.py", "tiny_fp32.0.inference.py",
                 "tiny_fp32_plain.0.inference.py", "tiny_train_fp32.0.forward.py",
                 "tiny_train_fp32.1.backward.py"]
    for combo in ["tileops", "tileops,cuda_graph"]
}


def kernel_sources(text):
    return re.findall(r"async_compile\.triton\('[^']+', '''(.*?)''', device_str", text, re.S)


def kernel_configs(text, tmp):
    """{kernel: [(kwargs, num_warps, num_stages)]} of the autotuners the kernel modules build with
    this torch's real heuristics (no GPU needed to build them); None without triton."""
    try:
        import importlib.util
        from unittest import mock

        from torch._inductor.runtime import triton_helpers
    except ImportError:
        return None
    out = {}
    for name, src in re.findall(r"async_compile\.triton\('([^']+)', '\'\'(.*?)'\'\', device_str",
                                text, re.S):
        path = os.path.join(tmp, f"k{abs(hash(src))}.py")
        with open(path, "w") as f:
            f.write(src)
        with mock.patch.object(triton_helpers, "set_driver_to_gpu", lambda: None):
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
        out[name] = [(dict(c.kwargs), c.num_warps, c.num_stages) for c in getattr(mod, name).configs]
    return out


def call_facts(tree):
    """(def line args, unpack targets, has clear, return arity) of the first call()."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "call":
            unpack = next(
                (ast.unparse(s.targets[0]) for s in node.body
                 if isinstance(s, ast.Assign) and isinstance(s.value, ast.Name)
                 and s.value.id == "args"),
                None,
            )
            clear = any(
                isinstance(s, ast.Expr) and ast.unparse(s) == "args.clear()" for s in node.body
            )
            ret = [s for s in node.body if isinstance(s, ast.Return)][-1]
            arity = len(ret.value.elts) if isinstance(ret.value, ast.Tuple) else 1
            return [a.arg for a in node.args.args], unpack, clear, arity
    raise AssertionError("no call()")


def main():
    exe, data = sys.argv[1], sys.argv[2]
    failures = []
    checked = 0
    autotuners_checked = [0]
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(data)):
            if not name.endswith(".py"):
                continue
            original = open(os.path.join(data, name)).read()
            orig_facts = call_facts(ast.parse(original))
            n_kernels = len(kernel_sources(original))
            for combo in COMBINATIONS:
                out = os.path.join(tmp, f"{name}.{combo}.py")
                r = subprocess.run([exe, os.path.join(data, name), out, combo], capture_output=True,
                                   text=True)
                if r.returncode == 2:
                    expected = EXPECTED_REFUSALS.get((name, combo))
                    if expected is None or expected not in r.stderr:
                        failures.append(f"{name} {combo}: refused: {r.stderr.strip()}")
                    continue
                if r.returncode != 0:
                    failures.append(f"{name} {combo}: exit {r.returncode}: {r.stderr.strip()}")
                    continue
                text = open(out).read()
                try:
                    tree = ast.parse(text)
                    for src in kernel_sources(text):
                        ast.parse(src)
                except SyntaxError as e:
                    failures.append(f"{name} {combo}: does not parse: {e}")
                    continue
                if text.count("def call(") != 1:
                    failures.append(f"{name} {combo}: {text.count('def call(')} call() defs")
                if call_facts(tree) != orig_facts:
                    failures.append(f"{name} {combo}: call ABI changed: {call_facts(tree)} vs "
                                    f"{orig_facts}")
                if "cuda_graph" in combo and "_ts_graphed_call(" not in text:
                    failures.append(f"{name} {combo}: no graph dispatch")
                if "tileops" in combo and not re.search(r"^\s+(\w+ = )?_ts_tileops\.\w+\(", text, re.M):
                    failures.append(f"{name} {combo}: no TileOPs call in call()")
                if "autotune" in combo and text.count("@_ts_widened(") != n_kernels:
                    failures.append(f"{name} {combo}: {text.count('@_ts_widened(')} of "
                                    f"{n_kernels} kernels widened")
                if "autotune" in combo and combo == "autotune":
                    # Inductor's own configs stay; variants join them, at most 6 in all.
                    before = kernel_configs(original, tmp)
                    after = kernel_configs(text, tmp)
                    if before is not None:
                        for k, configs in before.items():
                            widened = after.get(k, [])
                            if any(c not in widened for c in configs):
                                failures.append(f"{name}: kernel {k} lost configs: {configs} -> {widened}")
                            if (len(widened) == len(configs) < 6) or len(widened) > max(6, len(configs)):
                                failures.append(f"{name}: kernel {k}: {len(configs)} -> {len(widened)} configs")
                        autotuners_checked[0] += len(before)
                checked += 1
    for f in failures:
        print("FAIL", f)
    print(f"{checked} candidates parsed, {autotuners_checked[0]} widened autotuners built, "
          f"{len(failures)} failures")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
