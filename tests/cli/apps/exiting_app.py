"""Calls ``sys.exit`` as it is imported, as a module that checks its settings might; and has
a setup that does the same (probe-cli: exit 1, "internal error", and a bare message)."""

from __future__ import annotations

import os
import sys
from typing import Any

if os.environ.get("EXIT_AT_IMPORT"):
    sys.exit("DATABASE_URL is not set")


def setup(monque: Any) -> None:
    sys.exit(3)
