"""The engine never imports the console (Textual) — checked in a fresh interpreter — and the
console never opens a store's files itself (no ``sqlite3``, no store modules)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import json, sys
import monque_engine
from monque_engine import Monque
import monque_engine.scheduler, monque_engine.store, monque_engine.store.sqlite, monque_engine.cron
loaded = sorted(name for name in sys.modules
                if name == "textual" or name.startswith(("textual.", "monque_tui")))
print(json.dumps({"loaded": loaded, "engine": "monque_engine" in sys.modules}))
"""


def test_importing_the_engine_does_not_import_textual_or_the_console():
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["engine"] is True
    assert report["loaded"] == []


def test_the_check_would_notice_textual():
    # guard against a vacuous test: importing the console in the same way does load Textual
    script = SCRIPT.replace("import monque_engine\n", "import monque_engine\nimport textual\n", 1)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "textual" in json.loads(result.stdout.strip().splitlines()[-1])["loaded"]


CONSOLE_DIR = Path(__file__).resolve().parent.parent / "monque_tui"
#: What the console and CLI reach only through the engine's store interface
#: (``monque_engine.store``: open_store, locate_store, check_collection_name, JobStore).
STORE_INTERNALS = ("sqlite3", "monque_engine.store.sqlite", "monque_engine.store.mongo")


def _imported_modules(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_console_never_opens_a_store_file_itself():
    """monque_tui used to open sqlite3 itself and write raw rows through the SQLite store's
    journal; lint-imports' console-no-concrete-store contract keeps the store modules out,
    this keeps ``sqlite3`` out too (lazy imports inside functions included)."""
    files = sorted(CONSOLE_DIR.rglob("*.py"))
    assert len(files) > 30  # the walk does find the package
    found = {
        str(path.relative_to(CONSOLE_DIR)): sorted(
            name
            for name in _imported_modules(path.read_text())
            if any(name == banned or name.startswith(f"{banned}.") for banned in STORE_INTERNALS)
        )
        for path in files
    }
    assert {path: names for path, names in found.items() if names} == {}


def test_the_store_import_check_would_notice_sqlite3():
    assert "sqlite3" in _imported_modules("def f():\n    import sqlite3\n")
    assert "monque_engine.store.sqlite.schema" in _imported_modules("from monque_engine.store.sqlite import schema\n")
