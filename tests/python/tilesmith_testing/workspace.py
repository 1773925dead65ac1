"""A workspace for driving `_core.agent.run` from a test: the agent's view of one graph (its
original wrapper, the track directory, the gate and the profiler), with the gate's verdicts
given by the test."""


def accept_all(text):
    return {"verdict": "accepted", "reason": "accepted", "speedup": 2.0, "confirmed": True}


class ScriptedWorkspace:
    def __init__(self, original, track_dir, evaluate=accept_all, profile_rows=()):
        self._original, self._dir = original, str(track_dir)
        self._evaluate, self._profile_rows = evaluate, list(profile_rows)
        self.written, self.evaluated = [], []

    def original(self):
        return self._original

    def track_dir(self):
        return self._dir

    def write_candidate(self, text):
        self.written.append(text)

    def evaluate(self, text):
        self.evaluated.append(text)
        return self._evaluate(text)

    def read_spec(self, name):
        raise KeyError(name)

    def profile(self, text):
        return list(self._profile_rows)
