"""``monque-tui --read-only`` as a real process: a missing SQLite file is an error, never created."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli_helpers import CLI_DIR


def test_read_only_on_a_missing_file_is_one_line_and_creates_nothing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    result = subprocess.run(
        [sys.executable, "-m", "monque_tui", "--read-only", f"sqlite:///{tmp_path / 'typo.db'}"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=str(CLI_DIR),
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 3, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("monque-tui: error: "), result.stderr
    assert "does not exist" in lines[0] and "never creates a file" in lines[0]
    assert list(tmp_path.iterdir()) == []
