"""Key-to-frame timing from inside the console, for the soak benchmark (``MONQUE_TUI_KEYLOG``).

Reading the screen from outside (tmux) adds the terminal's share. With
``MONQUE_TUI_KEYLOG=/path`` set, the console appends one line per key that ran an action:
the key, the milliseconds from the key event's creation (the input thread read it) to the
moment the first frame drawn after the key's handler was *written to the terminal*, and
that frame's size in bytes (tab-separated). The bench reports it next to the tmux figure.

Where the frame ends matters. Textual renders a frame on the UI thread and hands the text to
a writer thread, which writes it to the terminal when it next holds the GIL, and a write
blocks while the terminal has not read the previous frame. The first version of this log
stopped the clock when the frame was handed over (Textual's ``post_display_hook``), and also
on a "display" that had nothing to draw: both left part of the console's own latency on the
terminal's side of the ledger. Now a marker follows each frame through the writer thread's
queue (``FrameMark``); the writer thread stops the clock once the frame's bytes are written
and flushed, and a display that wrote no bytes stops nothing. Without a writer thread
(headless tests), the hand-over is the end.

Off (no file, no driver wrapper, no work) unless the variable is set.
"""

from __future__ import annotations

import os
import threading
import time
from typing import IO, Any

ENV = "MONQUE_TUI_KEYLOG"

Handled = list[tuple[str, float]]  # (key, event created at, monotonic seconds)


class FrameMark(str):
    """Queued after a frame's text: the keys whose first frame that is. Writes nothing."""

    keys: Handled

    def __new__(cls, keys: Handled) -> FrameMark:
        mark = super().__new__(cls, "")
        mark.keys = keys
        return mark


class KeyLog:
    def __init__(self, path: str) -> None:
        self._out: IO[str] = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - lives with the app
        self._lock = threading.Lock()
        #: Keys handled but not yet on a displayed frame.
        self._handled: Handled = []
        #: True once the driver's output goes through ``FrameClockFile`` (frames are marked).
        self.marks_frames = False

    @classmethod
    def from_env(cls) -> KeyLog | None:
        path = os.environ.get(ENV)
        return cls(path) if path else None

    def handled(self, key: str, created: float) -> None:
        self._handled.append((key, created))

    def frame_displayed(self, write: Any) -> None:
        """After each display (UI thread). ``write``: the driver's ``write`` (None: headless).

        With a clocked output, a marker carrying the pending keys follows the frame to the
        writer thread (an empty one too: it starts the next frame's byte count). Otherwise
        the hand-over is the end of the frame.
        """
        keys, self._handled = self._handled, []
        if self.marks_frames and write is not None:
            write(FrameMark(keys))
        elif keys:
            self.record(keys, time.monotonic(), None)

    def record(self, keys: Handled, now: float, size: int | None) -> None:
        with self._lock:
            if self._out.closed:
                return
            for key, created in keys:
                line = f"{key}\t{(now - created) * 1000:.1f}"
                self._out.write(line + (f"\t{size}\n" if size is not None else "\n"))

    def clocked(self, file: IO[str]) -> FrameClockFile:
        """Wrap the driver's output file; from now on frames are marked (``frame_displayed``)."""
        self.marks_frames = True
        return FrameClockFile(file, self)

    def close(self) -> None:
        with self._lock:
            self._out.close()


class FrameClockFile:
    """The terminal file as the writer thread sees it: writes pass through, markers stop clocks.

    Runs on Textual's writer thread. A marker's keys are recorded once the bytes written
    since the previous marker are flushed; a marker after no bytes (a display with nothing
    to draw) hands its keys on to the next frame that has some.
    """

    def __init__(self, file: IO[str], log: KeyLog) -> None:
        self._file = file
        self._log = log
        self._bytes = 0
        self._carried: Handled = []

    def write(self, text: str) -> int:
        if isinstance(text, FrameMark):
            keys = self._carried + text.keys
            if not self._bytes:
                self._carried = keys
                return 0
            self._file.flush()
            if keys:
                self._log.record(keys, time.monotonic(), self._bytes)
            self._carried, self._bytes = [], 0
            return 0
        self._bytes += len(text.encode("utf-8", "replace")) if not text.isascii() else len(text)
        return self._file.write(text)

    def flush(self) -> None:
        self._file.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


def clocked_driver(base: type[Any]) -> type[Any]:
    """``base`` (Textual's terminal driver) with its output file wrapped in ``FrameClockFile``.

    Textual's Linux and Windows drivers hand ``self._file`` to their writer thread when
    application mode starts; wrapping it in ``__init__`` puts the clock where the bytes
    leave. A driver without that attribute is left as it is (the log then ends at the
    hand-over, as headless does).
    """

    class ClockedDriver(base):  # type: ignore[misc]  # the driver class Textual picked at run time
        def __init__(self, app: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(app, *args, **kwargs)
            log = getattr(app, "_keylog", None)
            file = getattr(self, "_file", None)
            if log is not None and file is not None:
                self._file = log.clocked(file)

    ClockedDriver.__name__ = ClockedDriver.__qualname__ = f"Clocked{base.__name__}"
    return ClockedDriver
