"""Launch the console: ``run_console(ConsoleConfig(url=...))`` returns the process exit code."""

from __future__ import annotations

import sys

from .app import MonqueConsole
from .config import ConsoleConfig


def run_console(config: ConsoleConfig) -> int:
    """Build and run the app; a store that cannot be opened is one line on stderr and exit code 1."""
    app = MonqueConsole(config)
    app.run()
    if app.error:
        print(app.error, file=sys.stderr)
        return app.return_code or 1
    return app.return_code or 0
