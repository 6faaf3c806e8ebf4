"""Export the console's view to a file, off the UI thread (issue 13 item 6).

``export_view`` is a plain blocking function meant for a worker thread: it opens its own
``Monque`` on the console's store (a thread needs its own event loop and connection), then
streams every job matching the view's filter with the engine's ``export_jobs`` (keyset
pages, constant memory). The format follows the path's extension: ``.csv`` is CSV (cells a
spreadsheet would run as formulas get a leading ``'``, as ``monque-tui export`` writes them
without ``--csv-raw``), anything else JSON Lines. An existing file is never overwritten, and
no path that leads to the store's own files is used (``monque_engine.export_target``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from monque_engine import JobListFilter, Monque
from monque_engine.export import export_jobs
from monque_engine.export_target import export_refusal


class ExportError(Exception):
    """The export cannot be written; ``str()`` is one line for the operator."""


def default_path(now_ms: int) -> str:
    stamp = datetime.fromtimestamp(now_ms / 1000, UTC).strftime("%Y%m%d-%H%M%S")
    return f"./monque-export-{stamp}.jsonl"


def format_for(path: str) -> str:
    return "csv" if path.lower().endswith(".csv") else "jsonl"


def check_target(path: str, store_url: str | None) -> Path:
    """The file ``path`` names, if an export may be written there; else ``ExportError`` saying why.

    The export dialog asks this before it closes, so an answer it cannot use is explained
    under the input and can be corrected (an empty path closed it without a word, and an
    existing file was reported after it had closed, the typed path lost; probe 7). The
    export itself asks again: the file may have appeared since. A path that leads to the
    store's own files (``jobs.db-journal`` through a symlinked folder: a new file there is
    still the store's) is refused before "already exists" is considered.
    """
    target = Path(os.path.expanduser(path.strip()))
    if not path.strip():
        raise ExportError("Export: type a file path (a .csv path writes CSV, anything else JSON Lines).")
    try:
        refusal = export_refusal(str(target), store_url)
        exists, folder = target.exists(), target.parent.is_dir()
    except (OSError, ValueError) as error:  # a name too long (ENAMETOOLONG), a NUL byte: the OS refuses the path
        reason = getattr(error, "strerror", None) or error
        raise ExportError(f"Export: cannot use that path ({reason}); choose another path.") from None
    if refusal is not None:
        raise ExportError(f"Export: {target} cannot be used: {refusal}; choose another path.")
    if exists:
        raise ExportError(f"Export: {target} already exists; choose another path.")
    if not folder:
        raise ExportError(f"Export: the folder {target.parent} does not exist; create it or choose another path.")
    return target


def export_view(
    url: str,
    options: Mapping[str, Any],
    list_filter: JobListFilter,
    path: str,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Write every job matching ``list_filter`` to ``path``; how many were written. Blocking."""
    target = check_target(path, url)

    async def run() -> int:
        monque = Monque(url, **{**dict(options), "recover_stale_jobs": False})
        await monque.initialize()
        try:
            with target.open("x", encoding="utf-8", newline="") as out:
                return await export_jobs(monque, out, list_filter, format_for(path), progress=progress)
        finally:
            await monque.close()

    try:
        return asyncio.run(run())
    except ExportError:
        raise
    except OSError as error:
        raise ExportError(f"Export: cannot write {target}: {error.strerror or error}") from None
    except Exception as error:  # noqa: BLE001 - one line for the operator
        raise ExportError(f"Export failed: {type(error).__name__}: {error}") from None
