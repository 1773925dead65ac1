"""Scripted model conversations for the mock OpenAI server (test-only).

The candidates are unified diffs anchored on `call = runner.call`, a line every Inductor 2.11
wrapper has (graph partitioning is on by default), so a script can be written before the wrapper
exists. The patcher finds a hunk at any offset.
"""

import json

ANCHOR = "call = runner.call"

# Doubles every output: a candidate the gate must reject as incorrect.
BROKEN_DIFF = (
    "@@ -1,1 +1,3 @@\n"
    f" {ANCHOR}\n"
    "+_ts_broken = call\n"
    "+call = lambda args: tuple(o * 2 for o in _ts_broken(args))\n"
)

# An equivalent candidate that counts its own calls, so a test can see that it is what runs.
COUNTED_LINES = [
    "_ts_calls = [0]",
    "_ts_inner = call",
    "def _ts_counted(args):",
    "    _ts_calls[0] += 1",
    "    return _ts_inner(args)",
    "call = _ts_counted",
]
COUNTED_DIFF = (f"@@ -1,1 +1,{1 + len(COUNTED_LINES)} @@\n {ANCHOR}\n"
                + "".join(f"+{l}\n" for l in COUNTED_LINES))
# The same candidate reached from BROKEN_DIFF's text (a diff applies to the current candidate).
FIX_BROKEN_DIFF = (f"@@ -1,3 +1,{1 + len(COUNTED_LINES)} @@\n {ANCHOR}\n"
                   "-_ts_broken = call\n"
                   "-call = lambda args: tuple(o * 2 for o in _ts_broken(args))\n"
                   + "".join(f"+{l}\n" for l in COUNTED_LINES))


def _call(i, name, args):
    return {"id": f"c{i}", "name": name, "arguments": json.dumps(args)}


def reject_then_accept() -> list:
    """Three model calls: read, a wrong candidate (rejected), a correct one (accepted)."""
    return [
        {"kind": "completion", "tool_calls": [_call(1, "read_attempt", {})]},
        {"kind": "completion", "tool_calls": [_call(2, "write_candidate", {"diff": BROKEN_DIFF}),
                                              _call(3, "evaluate", {})]},
        {"kind": "completion", "tool_calls": [_call(4, "write_candidate",
                                                    {"diff": FIX_BROKEN_DIFF}),
                                              _call(5, "evaluate", {})]},
    ]


def accept_each(graphs: int) -> list:
    """One model call per graph: write the counted candidate and evaluate it."""
    return [{"kind": "completion", "tool_calls": [_call(2 * i, "write_candidate",
                                                        {"diff": COUNTED_DIFF}),
                                                  _call(2 * i + 1, "evaluate", {})]}
            for i in range(graphs)]
