# attack: none, a candidate that never returns (a deadlocked kernel, an infinite loop). The
#   worker's deadline passes and its whole process group is killed.
# expect: timeout
# needs: cpu
# slow: hang
import time


def call(args):
    args.clear()
    while True:
        time.sleep(0.05)
