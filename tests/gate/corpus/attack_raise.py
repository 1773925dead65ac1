# attack: none, a broken candidate: raises inside call().
# expect: exception
# needs: cpu
def call(args):
    args.clear()
    raise RuntimeError("candidate kernel launch failed: invalid configuration argument")
