# attack: none, a broken candidate: fails at import (a missing module).
# expect: exception
# needs: cpu
import tilesmith_no_such_module  # noqa: F401


def call(args):
    return ()
