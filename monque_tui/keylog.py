"""Key-to-frame timing from inside the console, for the soak benchmark (``MONQUE_TUI_KEYLOG``).

Reading the screen from outside (tmux) adds the terminal's share and, with a process per
look, CPU of its own. With ``MONQUE_TUI_KEYLOG=/path`` set, the console appends one line
per key: the key, then milliseconds from the key event's creation (the input thread read
it) to the end of writing the first frame after the key's handler ran. That is the
console's own share of key-to-screen; the bench reports it next to the tmux figure.
Off (no file, no work) unless the variable is set.
"""

from __future__ import annotations

import os
import time
from typing import TextIO

ENV = "MONQUE_TUI_KEYLOG"


class KeyLog:
    def __init__(self, path: str) -> None:
        self._out: TextIO = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - lives with the app
        #: Keys handled but not yet on a written frame: (key, created at, monotonic).
        self._handled: list[tuple[str, float]] = []

    @classmethod
    def from_env(cls) -> KeyLog | None:
        path = os.environ.get(ENV)
        return cls(path) if path else None

    def handled(self, key: str, created: float) -> None:
        self._handled.append((key, created))

    def frame_written(self) -> None:
        if not self._handled:
            return
        now = time.monotonic()
        for key, created in self._handled:
            self._out.write(f"{key}\t{(now - created) * 1000:.1f}\n")
        self._handled.clear()

    def close(self) -> None:
        self._out.close()
