"""Griffe extension: the reST in the kit's docstrings, written as Markdown for the API pages.

The docstrings are Google-style (``Args:``, ``Returns:``) but use three reST forms that
Markdown would print as they are; this turns them into their Markdown equivalents before
mkdocstrings parses a docstring:

=====================================  ===========================================================
reST                                   Markdown
=====================================  ===========================================================
``:func:`~pkg.mod.name```, ``:mod:``  an optional cross-reference: a link where the API pages
and the other Sphinx roles             render the target, else the name in code (the ``~`` keeps
                                       only the last part)
``text::`` or a line ``::``            ``text:`` or nothing (the indented block that follows is
                                       already a Markdown code block)
simple tables (``=====  =====``)       pipe tables (a table without a header row gets an empty one)
=====================================  ===========================================================

Nothing here imports the documented code: it edits the text griffe read from the sources.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:mod|func|class|meth|attr|data|obj|exc|const):`(~?)([\w.]+)(?:\(\))?`")
"""A Sphinx cross-reference role; group 1 is ``~`` (show the last part only), group 2 the target."""
BORDER = re.compile(r"^ *=+( +=+)+ *$")
"""A border line of a reST simple table: runs of ``=`` separated by spaces."""
ROOTS = ("scopa_env.", "agents.", "train.", "scopa_app.")
"""Targets that start with one of these are already full paths."""


def _full_path(obj: griffe.Object, target: str) -> str:
    """The full path of ``target`` as seen from ``obj``'s scope (the target itself if unknown)."""
    if target.startswith(ROOTS):
        return target
    head, _, rest = target.partition(".")
    try:
        resolved = obj.resolve(head)
    except (griffe.NameResolutionError, AttributeError, KeyError):
        return target
    return f"{resolved}.{rest}" if rest else resolved


def _roles(text: str, obj: griffe.Object) -> str:
    def link(match: re.Match[str]) -> str:
        target = match.group(2)
        title = target.rsplit(".", 1)[-1] if match.group(1) else target
        identifier = html.escape(_full_path(obj, target), quote=True)
        return f'<autoref identifier="{identifier}" optional><code>{html.escape(title)}</code></autoref>'

    return ROLE.sub(link, text)


def _literal_markers(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        if line.strip() == "::":
            out.append("")
        elif line.rstrip().endswith("::"):
            out.append(line.rstrip()[:-1])
        else:
            out.append(line)
    return out


def _cell(text: str) -> str:
    """``text`` with its pipes escaped, outside code spans (where the table reads them as text)."""
    parts = re.split(r"(``.*?``|`.*?`)", text)
    return "".join(part if part.startswith("`") else part.replace("|", "\\|") for part in parts)


def _table(rows: list[list[str]], header: list[str] | None) -> list[str]:
    def row(cells: list[str]) -> str:
        return "| " + " | ".join(_cell(cell) for cell in cells) + " |"

    width = len(header or rows[0])
    return [row(header or [""] * width), "|" + "---|" * width, *(row(cells) for cells in rows)]


def _simple_tables(lines: list[str]) -> list[str]:
    """Replace every reST simple table in ``lines`` with a pipe table."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not BORDER.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        starts = [m.start() for m in re.finditer(r"=+", lines[i])]
        borders = [i]
        j = i + 1
        while j < len(lines) and len(borders) < 3:
            if BORDER.match(lines[j]):
                borders.append(j)
                # A border right after one header row ends the header; any other ends the table.
                if len(borders) == 2 and j - borders[0] == 2 and j + 1 < len(lines) and lines[j + 1].strip():
                    j += 1
                    continue
                break
            j += 1
        segments = [lines[a + 1 : b] for a, b in zip(borders, borders[1:])]
        parsed = [_rows(segment, starts) for segment in segments]
        if not parsed or not parsed[-1]:  # not a table after all (one border, or no body)
            out.append(lines[i])
            i += 1
            continue
        header = parsed[0][0] if len(parsed) == 2 else None
        out.extend(["", *_table(parsed[-1], header), ""])
        i = borders[-1] + 1
    return out


def _rows(lines: list[str], starts: list[int]) -> list[list[str]]:
    """Cells of a simple table's lines; a line with an empty first column continues the row above."""
    rows: list[list[str]] = []
    for line in lines:
        if not line.strip():
            continue
        ends = [*starts[1:], max(len(line), starts[-1])]
        cells = [line[a:b].strip() for a, b in zip(starts, ends)]
        cells[-1] = line[starts[-1] :].strip()
        if rows and not cells[0]:
            rows[-1] = [f"{old} {new}".strip() for old, new in zip(rows[-1], cells)]
        else:
            rows.append(cells)
    return rows


def rest_to_markdown(text: str, obj: griffe.Object) -> str:
    """``text`` with its reST roles, literal markers and simple tables in Markdown."""
    lines = _simple_tables(_literal_markers(text.splitlines()))
    return _roles("\n".join(lines), obj)


class RestToMarkdown(griffe.Extension):
    """Rewrites every docstring once the object tree is complete (see the module docstring)."""

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if not obj.is_alias and obj.docstring is not None:
            obj.docstring.value = rest_to_markdown(obj.docstring.value, obj)
