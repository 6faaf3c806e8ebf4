"""A TLS file named in a MongoDB URL that cannot be used is a bad URL, said in one line (probe-cli).

``tlsCAFile=/missing`` (or a directory, or ``tlsCertificateKeyFile`` / ``tlsCRLFile`` naming
no file) escaped PyMongo's option check as ``FileNotFoundError``, and a ``tlsCAFile`` that is
not PEM as ``ssl.SSLError``: every mode and command printed "internal error: ..." and exited
1, the code for a bug. They are now usage errors (exit 2) naming the option, the password
masked; the engine's URL parse refuses the missing file itself (``InvalidMongoUrlError``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import CLI_DIR

from monque_engine.store.mongo.config import InvalidMongoUrlError, parse_mongo_url

BASE = "mongodb://user:secret@127.0.0.1:1/db?serverSelectionTimeoutMS=500&tls=true&"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    command = [sys.executable, "-m", "monque_tui", *args]
    return subprocess.run(command, cwd=CLI_DIR, env=env, text=True, capture_output=True, timeout=60)


def assert_one_line_usage_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("monque-tui: error: "), done.stderr
    assert "secret" not in done.stderr and "internal error" not in done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.parametrize("option", ["tlsCAFile", "tlsCertificateKeyFile", "tlsCRLFile"])
def test_a_missing_tls_file_is_a_usage_error_in_a_command(tmp_path: Path, option: str) -> None:
    done = run("paused", "--connect-timeout", "0.5", f"{BASE}{option}={tmp_path / 'missing.pem'}")
    assert_one_line_usage_error(done, f"option {option!r}", "not readable")


def test_a_directory_as_the_ca_file_is_a_usage_error_for_the_worker(tmp_path: Path) -> None:
    done = run("--worker", "--app", "apps.worker_app:setup", "--connect-timeout", "0.5", f"{BASE}tlsCAFile={tmp_path}")
    assert_one_line_usage_error(done, "option 'tlsCAFile'")


def test_a_ca_file_that_is_not_pem_is_a_usage_error(tmp_path: Path) -> None:
    garbage = tmp_path / "ca.pem"
    garbage.write_text("not a certificate\n")
    done = run("health", "--connect-timeout", "0.5", f"{BASE}tlsCAFile={garbage}")
    assert_one_line_usage_error(done, "a TLS file it names cannot be used", "tlsCAFile")


def test_the_engine_refuses_the_missing_file_as_a_bad_url(tmp_path: Path) -> None:
    with pytest.raises(InvalidMongoUrlError, match="tlsCAFile") as raised:
        parse_mongo_url(f"{BASE}tlsCAFile={tmp_path / 'missing.pem'}")
    assert "secret" not in str(raised.value)
