"""The host-owned gate: correctness, paired timing and fresh confirmation in isolated workers.

    from tilesmith.gate import Gate, GateOptions, GateReport
    with Gate(original_source, args, track_dir, GateOptions(device="cuda")) as gate:
        report = gate.evaluate(candidate_source, label="fused")
        report.verdict, report.reason, report.summary()

Candidate code only ever runs in worker processes (tilesmith.gate.worker); the verdict comes
from the C++ core (_core.gate_judge_phase / gate_decide) on the workers' raw evidence.
"""

from tilesmith.gate.host import Gate, GateIntegrityError, GateOptions, GateReport, GateUnavailable

__all__ = ["Gate", "GateIntegrityError", "GateOptions", "GateReport", "GateUnavailable"]
