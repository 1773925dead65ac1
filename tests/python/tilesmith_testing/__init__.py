"""Test-only helpers for the Tilesmith integration tests (never shipped)."""
