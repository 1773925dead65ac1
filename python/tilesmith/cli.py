"""The `tilesmith` command line: the runs and tracks under the cache root.

    tilesmith runs                     list runs (id, tracks, last change)
    tilesmith show RUN [KEY]           a run's tracks (kind, status, attempts, verdicts, speedup),
                                       or one track's attempts and every report in it
    tilesmith clean [--older-than D] [--dry-run]
                                       remove finished runs: only directories Tilesmith marked
                                       as its runs, never a link, never a run a live process
                                       holds; --dry-run lists what would go

The root is TILESMITH_CACHE_DIR, else ~/.cache/tilesmith.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys


def _root() -> str:
    from tilesmith import _core
    return _core.cache_root()


def _read_json(path):
    """The JSON object in `path`, or None when it is missing, unreadable or not an object."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _number(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _benchmark_text(b) -> str | None:
    """'Inductor 1.0000 ms, Tilesmith 0.5000 ms, 2.00x (agent)', or None when malformed."""
    if not isinstance(b, dict):
        return None
    ind, ts, sp = (_number(b.get(k)) for k in ("torch_inductor_ms", "tilesmith_ms", "speedup"))
    if ind is None or ts is None or sp is None:
        return None
    return f"Inductor {ind:.4f} ms, Tilesmith {ts:.4f} ms, {sp:.2f}x ({b.get('source', '?')})"


def _profiles(track_dir) -> list[tuple[str, dict]]:
    d = os.path.join(track_dir, "profiles")
    if not os.path.isdir(d):
        return []
    out = []
    for name in sorted(os.listdir(d)):
        if name.endswith(".json") and not name.startswith("."):
            out.append((name, _read_json(os.path.join(d, name)) or {}))
    return out


def _attempts(track_dir) -> list[str]:
    d = os.path.join(track_dir, "attempts")
    if not os.path.isdir(d):
        return []
    return sorted(n for n in os.listdir(d) if n.startswith("attempt_") and n.endswith(".py"))


def _resolve_run(root, run) -> str | None:
    from tilesmith import _core
    ids = [r["run_id"] for r in _core.list_runs(root)]
    if run in ids:
        return run
    matches = [i for i in ids if i.startswith(run)]
    return matches[0] if len(matches) == 1 else None


def cmd_runs(args, out) -> int:
    from tilesmith import _core
    root = _root()
    runs = _core.list_runs(root)
    if not runs:
        print(f"no runs under {root}", file=out)
        return 0
    print(f"{'RUN':48} {'TRACKS':>6}  LAST CHANGE (UTC)", file=out)
    for r in runs:
        when = datetime.datetime.fromtimestamp(r["modified_unix_s"], datetime.timezone.utc)
        print(f"{r['run_id']:48} {r['tracks']:>6}  {when:%Y-%m-%d %H:%M:%S}", file=out)
    return 0


def _verdicts(track_dir) -> str:
    parts = []
    for _, rep in _profiles(track_dir):
        v = rep.get("verdict", "?")
        sp = _number(rep.get("speedup"))
        parts.append(f"{v}" + (f" {sp:.2f}x" if sp else ""))
    return ", ".join(parts) or "-"


def cmd_show(args, out) -> int:
    from tilesmith import _core
    root = _root()
    run = _resolve_run(root, args.run)
    if run is None:
        print(f"tilesmith show: no run {args.run!r} under {root} (see `tilesmith runs`)",
              file=sys.stderr)
        return 1
    keys = _core.list_tracks(root, run)
    if args.key is None:
        print(f"run {run}: {len(keys)} track(s)", file=out)
        for key in keys:
            tdir = os.path.join(root, "runs", run, key)
            summary = _read_json(os.path.join(tdir, "track.json")) or {}
            hit = os.path.exists(os.path.join(tdir, "cache.json"))
            bench = summary.get("benchmark")
            sp = _number(bench.get("speedup")) if isinstance(bench, dict) else None
            speed = f"{sp:.2f}x" if sp else "-"
            print(f"  {key}  {summary.get('kind', '?'):9} {speed:>7}  "
                  f"{summary.get('status', '?')}{'  [artifact-cache hit]' if hit else ''}",
                  file=out)
            print(f"      attempts: {len(_attempts(tdir))}  verdicts: {_verdicts(tdir)}", file=out)
        return 0
    matches = [k for k in keys if k.startswith(args.key)]
    if len(matches) != 1:
        print(f"tilesmith show: run {run} has no single track matching {args.key!r}",
              file=sys.stderr)
        return 1
    key = matches[0]
    tdir = os.path.join(root, "runs", run, key)
    summary = _read_json(os.path.join(tdir, "track.json")) or {}
    print(f"track {key} of run {run}", file=out)
    print(f"  dir:    {tdir}", file=out)
    for field in ("kind", "status", "reason"):
        if field in summary:
            print(f"  {field + ':':7} {summary[field]}", file=out)
    if os.path.exists(os.path.join(tdir, "track.json")) and not summary:
        print("  track.json: unreadable (not a JSON object)", file=out)
    if summary.get("benchmark"):
        text = _benchmark_text(summary["benchmark"])
        print(f"  timing: {text or 'malformed benchmark entry'}", file=out)
    hit = _read_json(os.path.join(tdir, "cache.json"))
    if hit:
        check = hit.get("check") if isinstance(hit.get("check"), dict) else {}
        print(f"  artifact-cache hit: {hit.get('artifact')} (installed: {hit.get('installed')}; "
              f"re-check: {check.get('reason')})", file=out)
    print("  attempts:", file=out)
    for name in _attempts(tdir):
        with open(os.path.join(tdir, "attempts", name), encoding="utf-8", errors="replace") as f:
            lines = f.read().count("\n")
        print(f"    {name}  {lines} lines", file=out)
    print("  reports:", file=out)
    for name, rep in _profiles(tdir):
        print(f"    {name}: {rep.get('reason') or rep.get('verdict', '?')}", file=out)
    return 0


def cmd_clean(args, out) -> int:
    from tilesmith import _core
    root = _root()
    report = _core.clean_runs(root, args.older_than, args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    print(f"{verb} {len(report['removed'])} run(s) under {os.path.join(root, 'runs')}", file=out)
    if args.dry_run:
        for r in report["removed"]:
            print(f"  would remove {r}", file=out)
    for r in report["skipped_in_use"]:
        print(f"  kept {r}: in use by a live process", file=out)
    for r in report["not_ours"]:
        print(f"  left {r}", file=out)
    return 0


def _days(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not (v >= 0):
        raise argparse.ArgumentTypeError(f"{text!r}: a number of days must be >= 0")
    return v


def main(argv=None, out=None) -> int:
    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="tilesmith", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("runs", help="list runs")
    show = sub.add_parser("show", help="a run's tracks, or one track in detail")
    show.add_argument("run", help="run id (or a unique prefix)")
    show.add_argument("key", nargs="?", help="cache key (or a unique prefix)")
    clean = sub.add_parser("clean", help="remove runs")
    clean.add_argument("--older-than", type=_days, default=None, metavar="DAYS",
                       help="only runs last changed more than DAYS days ago")
    clean.add_argument("--dry-run", action="store_true", help="list what would be removed")
    from tilesmith import bench as _bench  # stdlib-only at import; torch loads in its children

    _bench.add_arguments(sub.add_parser("bench", help="Tilesmith vs Inductor on KernelBench problems"))
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(out)
        return 0
    if args.command == "bench":
        return _bench.main_run(args)
    try:
        return {"runs": cmd_runs, "show": cmd_show, "clean": cmd_clean}[args.command](args, out)
    except OSError as e:
        print(f"tilesmith {args.command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
