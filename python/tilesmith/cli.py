"""The `tilesmith` command line."""

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="tilesmith", description=__doc__)
    parser.add_subparsers(dest="command")
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
