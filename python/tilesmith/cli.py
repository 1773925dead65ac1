"""The `tilesmith` command line."""

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="tilesmith", description=__doc__)
    commands = parser.add_subparsers(dest="command")
    from tilesmith import bench as _bench  # stdlib-only at import; torch loads in its children

    _bench.add_arguments(commands.add_parser("bench", help="Tilesmith vs Inductor on KernelBench problems"))
    args = parser.parse_args(argv)
    if args.command == "bench":
        return _bench.main_run(args)
    if args.command is None:
        parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
