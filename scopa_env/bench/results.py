"""Measurements as data: the record every result file under ``benchmarks/results/`` holds.

A record says what was measured, how, on what code and under what load, so a number can be
rerun and compared instead of being retold in prose. ``benchmarks/render_results.py`` turns
the files into ``docs/results.md``.

=================  ==================================================================
``what``           one line: what was measured
``command``        the exact command that made it (``None`` where it was not recorded)
``commit``         ``git rev-parse HEAD`` of the measured code (``None`` outside a checkout)
``date``           ISO date (a tool's own runs: ISO date and time, UTC)
``load_average``   the machine's load as reported: ``{"start": [1, 5, 15 min],
                   "end": [...]}`` from a tool, ``{"min": a, "max": b}`` where a range
                   was reported, or ``None`` where it was not recorded
``columns``        ``[[key, header], ...]``: which row keys the table shows, in order
``rows``           the values, one dict per row
=================  ==================================================================

:func:`result_record` builds one; :func:`write_record` writes it as JSON.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REQUIRED_FIELDS = ("what", "command", "commit", "date", "load_average", "rows")
"""Keys every record has (``command``, ``commit`` and ``load_average`` may be ``None``)."""


def git_commit(cwd: str | os.PathLike | None = None) -> str | None:
    """The checked-out commit (``git rev-parse HEAD``), or ``None`` without git or a checkout.

    ``cwd`` defaults to this package's folder: the commit of the code being measured, wherever
    the command runs from.
    """
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=cwd if cwd is not None else Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    return commit or None


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or ``None`` where the system does not report them."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def result_record(
    command: str | None,
    rows: Sequence[dict[str, Any]],
    *,
    what: str,
    columns: Sequence[tuple[str, str]] | None = None,
    load: dict[str, Any] | None = None,
    commit: str | None = None,
    date: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One measurement record (see the module docstring).

    Args:
        command: the command that made the numbers.
        rows: one dict per measured row.
        what: one line saying what was measured.
        columns: ``(key, header)`` pairs shown as the table; by default every key of the first row.
        load: the load average as measured (``None``: not recorded).
        commit: the measured commit; by default the current checkout's, ``None`` outside one.
        date: by default now, in UTC, to the second.
        extra: further fields kept as they are (``notes``, ``machine``...).
    """
    rows = [dict(r) for r in rows]
    if columns is None:
        columns = [(k, k) for k in rows[0]] if rows else []
    return {
        "what": what,
        "command": command,
        "commit": commit if commit is not None else git_commit(),
        "date": date if date is not None else _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "load_average": load,
        "columns": [list(c) for c in columns],
        "rows": rows,
        **extra,
    }


def missing_fields(record: dict[str, Any]) -> list[str]:
    """The required fields a record lacks (an empty list when it is complete)."""
    return [f for f in REQUIRED_FIELDS if f not in record]


def write_record(record: dict[str, Any], path: str | os.PathLike) -> None:
    """Write ``record`` as indented JSON; refuse one that lacks a required field."""
    missing = missing_fields(record)
    if missing:
        raise ValueError(f"a result record needs {', '.join(missing)}; got keys {sorted(record)}")
    with open(path, "w") as fh:
        json.dump(record, fh, indent=2)
        fh.write("\n")
