"""An app whose import never ends (a connection made at import time to a server that does
not answer): a ``--processes`` child loading it must still heed its supervisor's stop."""

from __future__ import annotations

import sys
import threading

from monque_engine import Monque

print("hanging_import_app: importing", file=sys.stderr, flush=True)
threading.Event().wait()


def setup(monque: Monque) -> None:  # pragma: no cover - never reached
    pass
