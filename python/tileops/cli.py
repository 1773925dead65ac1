"""The `tileops` command line: validate the manifest, list ops, show one op's roofline."""

from __future__ import annotations

import argparse
import sys

from tileops import _core
from . import _kernels, manifest, registry


def kernel_problems(entries: list[dict], built: dict[str, str] | None) -> list[str]:
    """Registered kernels missing from a built _tskernels (a build that silently dropped one),
    and kernels serving another op than the one registering them. None: _tskernels not built."""
    if built is None:
        return []
    problems = []
    for e in entries:
        for k in e["kernels"]:
            if k not in built:
                problems.append(f"{e['name']}: kernel '{k}' is registered but not built into "
                                f"_tskernels (built: {', '.join(sorted(built)) or 'none'})")
            elif built[k] != e["name"]:
                problems.append(f"{e['name']}: kernel '{k}' serves {built[k]} in _tskernels")
    return problems


def _cmd_validate(args) -> int:
    path = args.specs or str(manifest.specs_dir())
    try:
        registry.load_builtin_ops()
    except ImportError as e:  # the op classes need torch
        print(f"tileops validate: cannot load the op classes ({e}); install torch", file=sys.stderr)
        return 1
    entries = registry.entries()
    report = _core.validate_manifest(path, entries, args.profile)
    problems = list(report["problems"])
    problems += kernel_problems(entries, _kernels.built_kernels() if _kernels.available() else None)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"tileops validate: {len(problems)} problem(s) in {path}", file=sys.stderr)
        return 1
    cuda = (f"{len(_kernels.built_kernels())} CUDA kernels built" if _kernels.available()
            else "CUDA kernels not built here")
    print(f"tileops validate: {report['ops']} ops, {report['workload_cases']} workload cases, "
          f"registry of {len(entries)} implementations: all consistent; {cuda} ({path})")
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
    sub.add_parser("validate", help="check every entry, workload and roofline, and the registry")
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
