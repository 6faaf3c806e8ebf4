"""The console's session core never imports Textual — checked in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import json, sys
import monque_tui.console.session
from monque_tui.console.session import ConsoleSession
import monque_tui.console.session.core, monque_tui.console.session.events, monque_tui.console.session.feed
loaded = sorted(name for name in sys.modules if name == "textual" or name.startswith("textual."))
print(json.dumps({"loaded": loaded, "session": "monque_tui.console.session.core" in sys.modules}))
"""


def _run(script: str) -> dict[str, object]:
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_the_session_core_does_not_import_textual() -> None:
    report = _run(SCRIPT)
    assert report["session"] is True
    assert report["loaded"] == []


def test_the_check_would_notice_textual() -> None:
    report = _run(
        SCRIPT.replace(
            "import monque_tui.console.session\n",
            "import monque_tui.console.session\nimport monque_tui.console.app\n",
            1,
        )
    )
    assert "textual" in report["loaded"]  # type: ignore[operator]
