"""Test-only helpers for the Tilesmith integration tests (never shipped)."""
RESULT_MARK = "TILESMITH_DRIVER_RESULT "
