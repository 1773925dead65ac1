# attack: none, a candidate that crashes the worker process (a segfault, as a CUDA fault or a
#   bad pointer would). Only the worker dies; the host reports the signal.
# expect: crashed
# needs: cpu
import ctypes


def call(args):
    args.clear()
    ctypes.string_at(0)
    return ()
