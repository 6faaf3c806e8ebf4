"""Export the console's view to a file, off the UI thread (issue 13 item 6).

``export_view`` is a plain blocking function meant for a worker thread: it opens its own
``Monque`` on the console's store (a thread needs its own event loop and connection), then
writes every job matching the view's filter with the engine's one file writer,
``monque_engine.export_file.write_export`` (the one ``monque-tui export --output`` uses:
keyset pages in constant memory, a temporary file renamed into place through its folder held
open, the store's own files refused however the path is spelled; issue 35 item 5). The format
follows the path's extension: ``.csv`` is CSV (cells a spreadsheet would run as formulas get a
leading ``'``, as ``monque-tui export`` writes them without ``--csv-raw``), anything else
JSON Lines. The console never overwrites: an existing file, device or FIFO is refused
(``replace=False``), and a failure part-way leaves no file behind.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from monque_engine import JobListFilter, Monque

if TYPE_CHECKING:
    from monque_engine.export_file import ExportFileError


class ExportError(Exception):
    """The export cannot be written; ``str()`` is one line for the operator."""


def default_path(now_ms: int) -> str:
    stamp = datetime.fromtimestamp(now_ms / 1000, UTC).strftime("%Y%m%d-%H%M%S")
    return f"./monque-export-{stamp}.jsonl"


def format_for(path: str) -> str:
    return "csv" if path.lower().endswith(".csv") else "jsonl"


def _line(target: Path, error: ExportFileError) -> str:
    """The operator's line for a path the writer refused (the dialog shows it under the input)."""
    if error.problem == "refused":
        return f"Export: {target} cannot be used: {error.reason}; choose another path."
    if error.problem == "exists":
        return f"Export: {target} already exists; choose another path."
    if error.problem == "directory":
        return f"Export: {target} is a directory; choose another path."
    if error.problem == "no-folder":
        folder = Path(os.path.realpath(target)).parent if target.is_symlink() else target.parent
        return f"Export: the folder {folder} does not exist; create it or choose another path."
    if error.problem == "unusable":
        return f"Export: cannot use that path ({error.reason}); choose another path."
    return f"Export: cannot write {target}: {error.reason}"


def check_target(path: str, store_url: str | None) -> Path:
    """The file ``path`` names, if an export may be written there; else ``ExportError`` saying why.

    The export dialog asks this before it closes, so an answer it cannot use is explained
    under the input and can be corrected (an empty path closed it without a word, and an
    existing file was reported after it had closed, the typed path lost; probe 7). The
    export itself asks again, and the writer once more through the folder it holds open:
    the path may change meanwhile. A path that leads to the store's own files
    (``jobs.db-journal`` through a symlinked folder: a new file there is still the store's)
    is refused before "already exists" is considered.
    """
    if not path.strip():
        raise ExportError("Export: type a file path (a .csv path writes CSV, anything else JSON Lines).")
    from monque_engine.export_file import ExportFileError, check_export_path  # here: the writer loads on export

    target = Path(os.path.expanduser(path.strip()))
    try:
        check_export_path(str(target), store_url, replace=False)
    except ExportFileError as error:
        raise ExportError(_line(target, error)) from None
    return target


def export_view(
    url: str,
    options: Mapping[str, Any],
    list_filter: JobListFilter,
    path: str,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Write every job matching ``list_filter`` to ``path``; how many were written. Blocking."""
    from monque_engine.export_file import ExportFileError, write_export

    target = check_target(path, url)

    async def run() -> int:
        monque = Monque(url, **{**dict(options), "recover_stale_jobs": False})
        await monque.initialize()
        try:
            return await write_export(
                monque, str(target), list_filter, format_for(path), store_url=url, replace=False, progress=progress
            )
        finally:
            await monque.close()

    try:
        return asyncio.run(run())
    except ExportFileError as error:
        raise ExportError(_line(target, error)) from None
    except OSError as error:
        raise ExportError(f"Export: cannot write {target}: {error.strerror or error}") from None
    except Exception as error:  # noqa: BLE001 - one line for the operator
        raise ExportError(f"Export failed: {type(error).__name__}: {error}") from None
