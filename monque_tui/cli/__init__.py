"""The ``monque-tui`` command line: flags and dispatch (``entry``), the script commands, settings, URL checks.

``main`` here is the console script's target (``monque-tui = monque_tui.cli:main`` in
pyproject.toml): the name installed scripts have always called, so an environment installed
before the package was grouped keeps a working ``monque-tui``. It imports ``entry`` on call,
not here, because ``serve.options`` imports ``cli.settings`` and ``entry`` imports
``serve.options``: importing the package must not pull in ``entry``.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``monque-tui``: see ``entry.main``."""
    from .entry import main as run

    return run(argv)
