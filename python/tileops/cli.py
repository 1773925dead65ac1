"""The `tileops` command line: validate the manifest, list ops, show one op's roofline."""

from __future__ import annotations

import argparse
import sys

from tileops import _core
from . import _kernels, layers, manifest


def kernel_registry() -> tuple[dict[str, str] | None, dict[str, str] | None]:
    """(kernel -> op) of the fp64 reference backend and of the CUDA kernels; None where that
    module is not built."""
    ref = _kernels._import("tileops._tskernels_ref")
    cuda = _kernels._import("tileops._tskernels")
    return (None if isinstance(ref, ImportError) else dict(ref.kernels()),
            None if isinstance(cuda, ImportError) else dict(cuda.kernels()))


def kernel_problems(reference: dict[str, str], built: dict[str, str] | None) -> list[str]:
    """Kernels of the reference backend missing from a built _tskernels (a build that silently
    dropped one), and kernels serving another op there. None: _tskernels not built."""
    if built is None:
        return []
    problems = []
    for k, op in sorted(reference.items()):
        if k not in built:
            problems.append(f"{op}: kernel '{k}' has a reference but is not built into "
                            f"_tskernels (built: {', '.join(sorted(built)) or 'none'})")
        elif built[k] != op:
            problems.append(f"{op}: kernel '{k}' serves {built[k]} in _tskernels")
    return problems


def reference_problems(m: manifest.Manifest) -> list[str]:
    """Each entry (spec-only ones too) names a reference that compiles (an expression) or imports
    (a module:function path) and, where torch is installed, fits the signature on a small call."""
    import importlib

    problems = []
    for op in m.ops:
        where = f"{op.file}:{op.line}:1: {op.name}"
        text = op.reference
        if not text:
            problems.append(f"{where}: the entry names no reference: (a Python expression over "
                            "the inputs and params, or module:function)")
        elif (path := manifest.reference_path(text)) is not None:
            module, attr = path
            try:
                ok = callable(getattr(importlib.import_module(module), attr, None))
            except ImportError as e:
                problems.append(f"{where}: reference {text}: cannot import {module} ({e})")
                continue
            if not ok:
                problems.append(f"{where}: reference {text}: {module} has no function {attr}")
        else:
            try:
                compile(text, "<reference>", "eval")
            except SyntaxError as e:
                problems.append(f"{where}: reference: not a Python expression ({e.msg} at "
                                f"column {e.offset})")
                continue
        try:
            from tileops import testing  # torch: the reference runs on the entry's base call
        except ImportError:
            continue
        why = testing.reference_mismatch(op)
        if why:
            problems.append(f"{where}: {why}")
    return problems


def _cmd_validate(args) -> int:
    path = args.specs or str(manifest.specs_dir())
    reference, cuda = kernel_registry()
    problems = []
    if reference is None:
        problems.append("tileops validate: the reference kernels (_tskernels_ref) are not built; "
                        "reinstall tileops")
        reference = {}
    by_op: dict[str, list[str]] = {}
    for kernel, op in reference.items():
        by_op.setdefault(op, []).append(kernel)
    entries = [{"name": op, "kernels": ks} for op, ks in sorted(by_op.items())]
    report = _core.validate_manifest(path, entries, args.profile)
    problems += list(report["problems"])
    problems += kernel_problems(reference, cuda)
    try:
        problems += reference_problems(manifest.load(path))
    except (manifest.SpecError, FileNotFoundError):
        pass  # the manifest's own problems are listed above
    checked = layers.check(layers.default_roots())
    problems += checked.problems
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"tileops validate: {len(problems)} problem(s) in {path}", file=sys.stderr)
        return 1
    built = (f"{len(cuda)} CUDA kernels built" if cuda is not None
             else "CUDA kernels not built here")
    print(f"tileops validate: {report['ops']} ops, {report['workload_cases']} workload cases, "
          f"{len(reference)} kernels registered: all consistent; {built}; layer boundaries "
          f"hold in {checked.files} files ({path})")
    return 0


def _load_or_report(args):
    try:
        return manifest.load(args.specs)
    except (manifest.SpecError, FileNotFoundError) as e:
        print(e, file=sys.stderr)
        return None


def _cmd_list(args) -> int:
    m = _load_or_report(args)
    if m is None:
        return 1
    print(m.list_text(), end="")
    return 0


def _cmd_show(args) -> int:
    m = _load_or_report(args)
    if m is None:
        return 1
    op = m.find(args.op)
    if op is None:
        print(f"tileops show: no op named {args.op!r} (ops: {', '.join(o.name for o in m.ops)})",
              file=sys.stderr)
        return 1
    print(_core.format_op_report(op, args.profile), end="")
    problems = _core.workload_problems(op)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


def _cmd_bench(args) -> int:
    from . import bench  # imports torch

    return bench.run(args)


def _gpu_name() -> str | None:
    try:
        import torch
    except ImportError:  # the spec commands work without torch
        return None
    return torch.cuda.get_device_name() if torch.cuda.is_available() else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="tileops", description=__doc__)
    parser.add_argument("--specs", help="spec folder or file (default: the packaged manifest)")
    parser.add_argument("--profile", default=None,
                        help="hardware profile: h200 or h100 (default: this GPU's; h200 without one)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("validate", help="check every entry, workload, case and roofline, the kernel "
                   "registry, each reference and the layer boundaries (docs/layer-boundaries.md)")
    sub.add_parser("list", help="one line per op")
    show = sub.add_parser("show", help="signature and per-workload roofline of one op")
    show.add_argument("op")
    bench = sub.add_parser("bench", help="time every workload row against the strongest baseline")
    bench.add_argument("--op", help="op names, comma-separated (default: every implemented op)")
    bench.add_argument("--dtype", help="only the dtype cases holding this dtype, e.g. bfloat16")
    bench.add_argument("--label", help="only the workload row with this label")
    bench.add_argument("--runs", type=int, default=50, help="timed runs per implementation (>= 50)")
    bench.add_argument("--quick", action="store_true", help="the first row of each op only")
    bench.add_argument("--no-compile", action="store_true", help="skip the torch.compile baseline")
    bench.add_argument("--tune", action="store_true", help="request_tune() each op (tuned configs)")
    bench.add_argument("--json", help="write the report as JSON here")
    bench.add_argument("--plot", help="write a roofline plot here (.png, or .svg without matplotlib)")
    args = parser.parse_args(argv)
    if args.profile is None:
        args.profile = manifest.hardware_profile_for(_gpu_name())
    return {"validate": _cmd_validate, "list": _cmd_list, "show": _cmd_show,
            "bench": _cmd_bench}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
