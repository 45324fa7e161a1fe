"""Progress bars on stderr for long CLI commands (ingest, eval, calibrate).

Why one helper: every command must decide the same way whether to draw (a terminal on
stderr, not ``--json``, ``--progress/--no-progress`` forcing either way), and tqdm alone
draws nothing on a terminal that reports no width (a bare pseudo-terminal, some CI
runners and ``docker exec -t`` report 0 columns): the bar is then drawn 80 columns wide
(and 24 rows tall, or tqdm hides it).
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from tqdm import tqdm

FALLBACK_COLUMNS, FALLBACK_ROWS = 80, 24


def progress_enabled(flag: bool | None, *, default: bool = True, as_json: bool = False,
                     stream: TextIO | None = None) -> bool:
    """``--progress``/``--no-progress`` win; otherwise draw only when ``default`` (the
    config), not ``--json`` (scripts read the output), and stderr is a terminal."""
    if flag is not None:
        return flag
    stream = stream or sys.stderr
    return default and not as_json and bool(getattr(stream, "isatty", lambda: False)())


def _shape(stream: TextIO) -> tuple[int, int]:
    """The terminal's columns and rows, each replaced by a fallback when it reports none
    (tqdm would draw an empty bar at 0 columns, and hide every bar at 0 rows)."""
    try:
        columns, rows = os.get_terminal_size(stream.fileno())
    except (OSError, ValueError, AttributeError):
        columns = rows = 0
    return (columns if columns > 0 else FALLBACK_COLUMNS), (rows if rows > 0 else FALLBACK_ROWS)


def bar(enabled: bool, *, desc: str, total: int | None = None, unit: str = "it", position: int | None = None,
        leave: bool = False, stream: TextIO | None = None) -> tqdm:
    """A tqdm bar on stderr, disabled (drawing nothing) unless ``enabled``."""
    stream = stream or sys.stderr
    opts: dict[str, Any] = {"file": stream, "disable": not enabled, "leave": leave, "desc": desc, "total": total,
                            "unit": unit, "position": position, "dynamic_ncols": False}
    if enabled:
        opts["ncols"], opts["nrows"] = _shape(stream)
    return tqdm(**opts)
