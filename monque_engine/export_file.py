"""Write an export to a file, safely: the one writer behind ``monque-tui export --output``, the
console's ``E`` and anything new (issue 35 item 5).

The command and the console each had their own, with different safety: the console opened
the path with ``open("x")`` after its check, so a failure part-way left half a file (and the
path then read "already exists"), and a folder swapped for a symlink between its check and its
open sent a new file into the store's folder. One writer now does what the command did:

* the path is refused when it leads to the store's files, however spelled
  (``export_target.export_refusal``);
* the export goes to ``NAME.partial-PID-N`` beside the target, made and then renamed through
  the target's folder held open, and that folder and name are checked against the store's
  files once more (``export_target.refusal_in_folder``), so a symlink swapped into the path
  meanwhile cannot redirect it; a failure, a cancel or a signal removes the partial file and
  leaves the target as it was;
* a device or FIFO (``/dev/null``, a named pipe) is written in place, never replaced, when
  replacing is allowed; a symlink is followed (the file it names is written, the link stays)
  and a replaced file keeps its permission bits.

``replace`` is the one difference between callers: the command replaces an earlier export
(``replace=True``), the console never overwrites a file (``replace=False``: an existing file,
device or FIFO is refused, and the finished file is linked into place, which fails rather
than replace a file that appeared meanwhile).
"""

from __future__ import annotations

import errno
import itertools
import os
import stat
from typing import TYPE_CHECKING, Literal, TextIO

from .export import Progress, export_jobs
from .export_target import export_refusal, refusal_in_folder

if TYPE_CHECKING:
    from .job import JobListFilter
    from .scheduler import Monque

#: Why a path cannot take the export: ``refused`` (it leads to a store's files), ``exists``
#: (``replace=False`` and something is there), ``directory``, ``no-folder`` (its folder does
#: not exist), ``unusable`` (the OS refuses the path itself: too long, a NUL byte) and
#: ``write`` (opening, writing or renaming failed: a full disk, no permission).
ExportFileProblem = Literal["refused", "exists", "directory", "no-folder", "unusable", "write"]

_SERIAL = itertools.count(1)
#: What ``os.link`` raises where a file system has no hard links (FAT, some network mounts):
#: the console's no-replace rename falls back to a look then a rename there.
_NO_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS})


class ExportFileError(Exception):
    """The export cannot be written to ``path``; ``problem`` says which case, ``reason`` in a
    few words (``it leads to the store's write-ahead log … through a symlink``, an OS error's
    text). Each caller words its own line from these (exit 2 on the command line)."""

    def __init__(self, problem: ExportFileProblem, path: str, reason: str) -> None:
        super().__init__(f"cannot write the export to {path}: {reason}")
        self.problem: ExportFileProblem = problem
        self.path = path
        self.reason = reason


def _os_reason(error: BaseException) -> str:
    return str(getattr(error, "strerror", None) or error)


def check_export_path(path: str, store_url: str | None, *, replace: bool) -> None:
    """Raise ``ExportFileError`` when an export may not be written to ``path``.

    What a dialog asks before it closes, and a command before it opens the store;
    ``write_export`` asks again (the path may change meanwhile), and once more through the
    open folder. A path leading to the store's files is refused before anything else is said
    about it.
    """
    if not path.strip():  # os.stat("") fails, but realpath("") is the working directory: "Is a directory"
        raise ExportFileError("unusable", path, "no file name given")
    try:
        refusal = export_refusal(path, store_url)
        found = _stat(path)
        folder = os.path.isdir(os.path.dirname(os.path.realpath(path)))
    except (OSError, ValueError) as error:  # a name too long (ENAMETOOLONG), a NUL byte
        raise ExportFileError("unusable", path, _os_reason(error)) from None
    if refusal is not None:
        raise ExportFileError("refused", path, refusal)
    if found is not None and stat.S_ISDIR(found.st_mode):
        raise ExportFileError("directory", path, "it is a directory")
    if found is not None and not replace:
        raise ExportFileError("exists", path, "it already exists")
    if not folder:
        raise ExportFileError("no-folder", path, os.strerror(errno.ENOENT))


def _stat(path: str) -> os.stat_result | None:
    """``path``'s file, symlinks followed; None when there is none (a dangling link included)."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


async def write_export(
    monque: Monque,
    path: str,
    filter: JobListFilter | None = None,
    format: str = "jsonl",
    *,
    store_url: str | None,
    replace: bool,
    progress: Progress | None = None,
    csv_raw: bool = False,
) -> int:
    """Export every job matching ``filter`` to the file ``path``; how many were written.

    ``store_url`` is the store being exported (its files are refused as targets). Raises
    ``ExportFileError`` for a path that cannot take the export or a write that failed, and
    ``InvalidJobQueryError`` for a bad filter or format (then nothing is left behind either).
    """
    check_export_path(path, store_url, replace=replace)
    try:
        found = _stat(path)
    except OSError as error:
        raise ExportFileError("write", path, _os_reason(error)) from None
    if found is not None and not replace:  # it appeared since the check
        raise ExportFileError("exists", path, "it already exists")
    if found is not None and not stat.S_ISREG(found.st_mode):  # a device or FIFO
        return await _write_in_place(monque, path, filter, format, progress, csv_raw)
    mode = None if found is None else stat.S_IMODE(found.st_mode)
    folder, name = os.path.split(os.path.realpath(path))
    try:
        folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        raise ExportFileError("write", path, _os_reason(error)) from None
    try:
        reason = refusal_in_folder(folder_fd, name, store_url)
        if reason is not None:
            raise ExportFileError("refused", path, reason)
        partial = f"{name}.partial-{os.getpid()}-{next(_SERIAL)}"
        return await _write_and_rename(
            monque, path, (folder_fd, partial, name), mode, replace, filter, format, progress, csv_raw
        )
    finally:
        os.close(folder_fd)


async def _write_and_rename(
    monque: Monque,
    path: str,
    where: tuple[int, str, str],
    mode: int | None,
    replace: bool,
    filter: JobListFilter | None,
    format: str,
    progress: Progress | None,
    csv_raw: bool,
) -> int:
    """The export into ``partial``, put in place as ``name`` once whole; both in the open
    folder ``folder_fd`` (``where`` holds the three)."""
    folder_fd, partial, name = where
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666, dir_fd=folder_fd)
    except OSError as error:
        reason = _os_reason(error)
        if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            # The export is made beside the target and renamed over it: the folder is what must
            # be writable ("permission denied" named the file, writable itself; a CLI probe).
            folder = os.path.dirname(os.path.abspath(path)) or "."
            reason += f" in the folder {folder} (the export is written beside the file, then renamed over it)"
        raise ExportFileError("write", path, reason) from None
    done = False
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            if mode is not None:
                os.fchmod(fd, mode)  # an earlier export's permissions stay (umask gave the new file its own)
            written = await export_jobs(monque, out, filter, format, progress=progress, csv_raw=csv_raw)
        if replace:
            os.replace(partial, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
        else:
            _place_without_replacing(path, folder_fd, partial, name)
        done = True
        return written
    except OSError as error:
        raise ExportFileError("write", path, _os_reason(error)) from None
    finally:
        if not done:
            try:
                os.unlink(partial, dir_fd=folder_fd)
            except OSError:
                pass


def _place_without_replacing(path: str, folder_fd: int, partial: str, name: str) -> None:
    """``partial`` as ``name`` unless something is at ``name`` by now (``ExportFileError`` "exists").

    A hard link then an unlink: ``link`` fails rather than replace, in one step (``rename``
    would replace whatever appeared since the check). Where the file system has no hard
    links, a look then a rename.
    """
    try:
        os.link(partial, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd, follow_symlinks=False)
    except FileExistsError:
        raise ExportFileError("exists", path, "it already exists") from None
    except OSError as error:
        if error.errno not in _NO_LINKS:
            raise
        try:
            os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        except FileNotFoundError:
            os.rename(partial, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
            return
        raise ExportFileError("exists", path, "it already exists") from None
    os.unlink(partial, dir_fd=folder_fd)


async def _write_in_place(
    monque: Monque, path: str, filter: JobListFilter | None, format: str, progress: Progress | None, csv_raw: bool
) -> int:
    """Write straight into a device or FIFO (nothing there to keep whole, nothing to replace)."""
    try:
        out: TextIO
        with open(path, "w", encoding="utf-8", newline="") as out:
            return await export_jobs(monque, out, filter, format, progress=progress, csv_raw=csv_raw)
    except OSError as error:
        raise ExportFileError("write", path, _os_reason(error)) from None


__all__ = ["ExportFileError", "ExportFileProblem", "check_export_path", "write_export"]
