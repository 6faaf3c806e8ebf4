"""The engine never imports the console (Textual) — checked in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

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
