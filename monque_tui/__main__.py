"""``python -m monque_tui``: the same as the ``monque-tui`` console script."""

from __future__ import annotations

import sys

from .cli.entry import main

if __name__ == "__main__":
    sys.exit(main())
