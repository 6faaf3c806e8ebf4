"""The ``monque-tui`` command line: flags and dispatch (``entry``), the script commands, settings, URL checks.

``main`` here is the console script's target (``monque-tui = monque_tui.cli:main`` in
pyproject.toml): the name installed scripts have always called, so an environment installed
before the package was grouped keeps a working ``monque-tui``. It imports ``entry`` on call,
not here, so that importing a part of the package (``cli.settings``, ``cli.commands``) does
not pull in every mode's options.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``monque-tui``: see ``entry.main``.

    The cyclic collector is off from here until the console's first rows, or until another
    mode starts (``common.startup_gc``); on the way out it is on again whatever happened.
    """
    from ..common import startup_gc

    startup_gc.hold()
    try:
        try:
            from .entry import main as run
        except KeyboardInterrupt:  # ctrl+c in the first tenth of a second: a line, not a traceback
            from ..common.streams import write_stderr

            write_stderr("monque-tui: stopped by ctrl+c while starting")
            return 130
        return run(argv)
    finally:
        startup_gc.release()
