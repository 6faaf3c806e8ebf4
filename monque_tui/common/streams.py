"""Writing to the standard streams when a script may have closed them (``>&-``, ``2>&-``).

With a closed stream the interpreter sets ``sys.stdout`` / ``sys.stderr`` to ``None``, and
``print(text, file=None)`` then writes to *stdout*: with stderr closed, ``export``'s
progress lines landed inside the JSON Lines it streamed to stdout (probe 7). With stdout
closed, ``print`` writes nothing and the command exited 0 having printed none of its
results. These helpers keep diagnostics off stdout and let a command refuse to start when
the stream its results go to is missing.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from .exitcodes import CliError, ExitCode


def is_open(stream: TextIO | None) -> bool:
    """Whether ``stream`` can be written: not missing (closed fd at start) and not closed since."""
    try:
        return stream is not None and not stream.closed
    except (OSError, ValueError):
        return False


def write_stderr(text: str) -> None:
    """One line on stderr; nothing at all when stderr is closed (never on stdout instead)."""
    stream = sys.stderr
    if not is_open(stream):
        return
    try:
        print(text, file=stream, flush=True)
    except (OSError, ValueError):  # a stderr that went away is nobody's to report to
        pass


def stdout_missing() -> bool:
    """True when stdout was closed by the caller (``>&-``): results printed there would vanish."""
    return not is_open(sys.stdout)


def print_help_text(message: str, file: Any) -> None:
    """``argparse``'s ``_print_message`` without its ``except OSError: pass``.

    argparse drops a write error: ``monque-tui --help > /dev/full`` lost the text and exited 0
    (probe 7). A reader that went away (``--help | head -1``) stays quiet, as before.
    """
    if not message:
        return
    stream = file or sys.stderr
    if not is_open(stream):
        return
    try:
        stream.write(message)
        stream.flush()
    except BrokenPipeError:
        pass
    except OSError as error:
        where = "stdout" if stream is sys.stdout else "stderr"
        raise CliError(f"cannot write {where}: {error.strerror or error}", ExitCode.USAGE) from None
