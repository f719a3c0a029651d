"""Helpers shared by the tests of what a user meets at the command line (``tests/test_cli.py``,
``tests/test_checkpoints.py``, ``tests/test_train_smoke.py``)."""

from __future__ import annotations


def one_line_error(err: str) -> str:
    """The single line a user error prints (no traceback)."""
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert "Traceback" not in err, err
    assert len(lines) == 1, f"expected one line, got:\n{err}"
    return lines[0]
