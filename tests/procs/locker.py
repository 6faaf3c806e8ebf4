"""A lock holder: ``python -m tests.procs.locker --db PATH [--mode immediate|exclusive]``

Opens the file with plain ``sqlite3``, takes the write lock with ``BEGIN IMMEDIATE`` (or
``EXCLUSIVE``), prints ``locked`` and holds the lock until a line arrives on stdin (or stdin closes); then rolls
back, prints ``released`` and exits 0. Simulates another process holding a long write
transaction (a backup tool, a migration, a hand session in the ``sqlite3`` shell).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys

from ._common import emit


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--db", required=True)
    p.add_argument("--mode", choices=("immediate", "exclusive"), default="immediate")
    args = p.parse_args()
    conn = sqlite3.connect(args.db, isolation_level=None, timeout=30)
    conn.execute(f"BEGIN {args.mode.upper()}")  # holds the write lock until ROLLBACK
    emit("locked", mode=args.mode)
    sys.stdin.readline()
    conn.execute("ROLLBACK")
    conn.close()
    emit("released")


if __name__ == "__main__":
    main()
