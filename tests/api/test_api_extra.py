"""The api extra stays optional (issue 39, ADR 0021): the engine never loads pydantic, and
without it ``monque_engine.management`` says in one line which extra to install."""

from __future__ import annotations

import subprocess
import sys

_NO_PYDANTIC = "import sys; sys.modules['pydantic'] = None\n"  # as if it were not installed


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_the_engine_never_imports_pydantic() -> None:
    done = _run(
        "import sys, monque_engine, monque_engine.scheduler.monque, monque_engine.store\n"
        "from monque_engine import Monque\n"
        "print('pydantic' in sys.modules)"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_without_the_extra_one_line_names_it() -> None:
    done = _run(_NO_PYDANTIC + "import monque_engine.management")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "ImportError: monque_engine.management needs the api extra (pydantic): pip install 'monque-tui[api]'"
    )
    assert "During handling" not in done.stderr  # `from None`: no chained traceback
