"""``python -m monque_tui``: the same as the ``monque-tui`` console script."""

from __future__ import annotations

import sys

from .cli import main  # the console script's own target (it holds the collector off while starting)

if __name__ == "__main__":
    sys.exit(main())
