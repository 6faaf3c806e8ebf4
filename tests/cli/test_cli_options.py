"""Flags, environment variables, --help/--version and URL validation.

Most cases call ``cli.main`` in-process (fast); one per kind runs the real console script to
prove the installed entry point behaves the same.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from monque_engine import Monque
from monque_tui.cli import entry as cli
from monque_tui.cli.settings import OPTIONS, resolve
from monque_tui.common.exitcodes import CliError


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("MONQUE_"):
            monkeypatch.delenv(key)


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(err: str, *needles: str) -> str:
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("monque-tui: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def console_script() -> str:
    script = Path(sys.executable).parent / "monque-tui"
    return str(script) if script.exists() else shutil.which("monque-tui") or "monque-tui"


# -- --help and --version -------------------------------------------------------------------------
def test_help_lists_every_flag_env_var_example_and_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(capsys, "--help")
    assert code == 0
    for option in OPTIONS:
        assert option.flag in out and option.env in out
    for text in (
        "--worker",
        "--demo",
        "--headless",
        "--version",
        "MONQUE_URL",
        "examples:",
        "monque-tui --worker --app myapp.tasks:monque",
        "exit codes:",
        "SIGTERM",
    ):
        assert text in out


def test_version_from_the_installed_script() -> None:
    result = subprocess.run([console_script(), "--version"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0
    assert re.fullmatch(r"monque-tui \d+\.\d+\.\d+\S* \(monque_engine \S+, Python 3\.\d+\.\d+\)\n", result.stdout)


def test_help_from_the_installed_script() -> None:
    result = subprocess.run([console_script(), "--help"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and "usage: monque-tui" in result.stdout


# -- flag errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--concurrency", "0"], "--concurrency: '0': expected a whole number of at least 1"),
        (["--poll-interval", "soon"], "--poll-interval: 'soon': expected a number of seconds"),
        (["--log-format", "xml"], "expected one of text, json"),
        (["--worker", "--demo"], "not allowed with argument"),
        (["--headless"], "--headless goes with --demo"),
        (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (["--worker", "--read-only", "--app", "x:y"], "--read-only does not apply to --worker"),
        (["--duration", "5"], "--duration does not apply to the console"),
        (["--demo", "--app", "x:y"], "--demo brings its own handlers"),
    ],
)
def test_bad_flags_are_one_line_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    code, _, err = run_main(capsys, *argv)
    assert code == 2
    assert_one_line_error(err, needle)


def test_console_refuses_an_instance_app(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TEST_APP_URL", f"sqlite:///{tmp_path / 'a.db'}")
    monkeypatch.chdir(Path(__file__).parent)
    code, _, err = run_main(capsys, "--app", "apps.instance_app:monque", f"sqlite:///{tmp_path / 'a.db'}")
    assert code == 2
    assert_one_line_error(err, "the console builds its own Monque", "--worker --app apps.instance_app:monque")


# -- environment -------------------------------------------------------------------------------------
def test_precedence_flag_then_env_then_default() -> None:
    env = {"MONQUE_CONCURRENCY": "3", "MONQUE_LOG_LEVEL": "warning", "MONQUE_URL": "sqlite:///env.db"}
    settings = resolve({"concurrency": 8, "url": None}, env)
    assert settings["concurrency"] == 8 and settings.sources["concurrency"] == "flag"
    assert settings["log_level"] == "warning" and settings.sources["log_level"] == "env"
    assert settings["log_format"] == "text" and not settings.given("log_format")
    assert settings["url"] == "sqlite:///env.db" and settings.origin("url") == "MONQUE_URL"
    assert resolve({"url": "sqlite:///flag.db"}, env)["url"] == "sqlite:///flag.db"
    assert resolve({}, {})["url"] == "sqlite:///monque.db"
    # only what the user set reaches the engine: the engine's own defaults stay in one place
    assert settings.engine_options() == {"worker_concurrency": 8}
    assert resolve({}, {"MONQUE_READ_ONLY": "yes"})["read_only"] is True
    assert resolve({"read_only": False}, {"MONQUE_READ_ONLY": "1"})["read_only"] is True  # a switch can't unset
    assert resolve({}, {"MONQUE_LOG_LEVEL": ""})["log_level"] == "info"  # empty means unset


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"MONQUE_CONCURRENCY": "lots"}, "MONQUE_CONCURRENCY='lots': expected a whole number"),
        ({"MONQUE_READ_ONLY": "maybe"}, "MONQUE_READ_ONLY='maybe': expected one of 1/0"),
        ({"MONQUE_SHUTDOWN_TIMEOUT": "-1"}, "MONQUE_SHUTDOWN_TIMEOUT='-1'"),
    ],
)
def test_bad_env_values_are_one_line_usage_errors(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, env: dict[str, str], needle: str
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    code, _, err = run_main(capsys, "--worker")
    assert code == 2
    assert_one_line_error(err, needle)


def test_resolve_raises_cli_error_naming_the_variable() -> None:
    with pytest.raises(CliError, match="MONQUE_LOCK_TIMEOUT='0'"):
        resolve({}, {"MONQUE_LOCK_TIMEOUT": "0"})


# -- URL validation ------------------------------------------------------------------------------------
def test_unknown_scheme_masks_the_password(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(capsys, "redis://alice:hunter2@cache:6379/0")
    assert code == 2
    line = assert_one_line_error(err, "Unknown store URL scheme 'redis'", "alice:***@")
    assert "hunter2" not in line


def test_unknown_scheme_from_the_environment(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MONQUE_URL", "postgres://bob:pw123@db/app")
    code, _, err = run_main(capsys)
    assert code == 2 and "pw123" not in err
    assert_one_line_error(err, "Unknown store URL scheme 'postgres'")


def test_a_bare_path_suggests_the_sqlite_url(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(capsys, "jobs.db")
    assert code == 2
    assert_one_line_error(err, "has no scheme", "did you mean sqlite:///jobs.db?")


def test_directory_that_does_not_exist(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_main(capsys, f"sqlite:///{tmp_path}/missing/dir/jobs.db")
    assert code == 3
    assert_one_line_error(err, f"directory {tmp_path}/missing/dir does not exist", "mkdir -p")
    assert not (tmp_path / "missing").exists()


def test_path_that_is_a_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_main(capsys, f"sqlite:///{tmp_path}")
    assert code == 3
    assert_one_line_error(err, "is a directory")


def test_file_that_is_not_a_database(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("shopping list: eggs, milk\n")
    code, _, err = run_main(capsys, f"sqlite:///{notes}")
    assert code == 3
    assert_one_line_error(err, "is not a SQLite database")
    assert notes.read_text() == "shopping list: eggs, milk\n"  # untouched


def test_bad_sqlite_parameter(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_main(capsys, f"sqlite:///{tmp_path}/jobs.db?synchronous=sometimes")
    assert code == 2
    assert_one_line_error(err, "synchronous must be normal or full")


def _unprivileged(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``monque-tui ARGS`` in a real process for which file modes apply: as root, without the
    capabilities that override them (setpriv)."""
    command = [sys.executable, "-m", "monque_tui", *args]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: file modes do not apply")
        command = [setpriv, "--bounding-set", "-dac_override,-dac_read_search", *command]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env, cwd=str(cwd))


def test_unreadable_file_as_a_real_process(tmp_path: Path) -> None:
    """Root reads every file whatever its mode, so as root the child runs without the
    capabilities that allow that (setpriv), which makes the mode bits apply again."""
    secret = tmp_path / "jobs.db"
    secret.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    secret.chmod(0)
    result = _unprivileged(tmp_path, f"sqlite:///{secret}")
    assert result.returncode == 3, result.stderr
    assert_one_line_error(result.stderr, "cannot read", "permission denied")


def test_unreachable_mongodb_masks_the_password(capsys: pytest.CaptureFixture[str]) -> None:
    # Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    code, _, err = run_main(capsys, "--connect-timeout", "0.5", "mongodb://alice:s3cr3t-pw@127.0.0.1:9/app")
    assert code == 3
    line = assert_one_line_error(err, "Cannot reach MongoDB at mongodb://alice:***@127.0.0.1:9/app")
    assert "s3cr3t-pw" not in line


def test_malformed_mongodb_url_masks_the_password(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(capsys, "--connect-timeout", "0.5", "mongodb://alice:s3cr3t-pw@/app?replicaSet=")
    assert code in (2, 3)
    assert "s3cr3t-pw" not in err
    assert_one_line_error(err)


def test_url_error_from_the_installed_script_is_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    env["MONQUE_URL"] = "mysql://root:topsecret@db/app"
    result = subprocess.run([console_script()], capture_output=True, text=True, timeout=30, env=env, cwd=str(tmp_path))
    assert result.returncode == 2
    assert "topsecret" not in result.stderr
    assert_one_line_error(result.stderr, "Unknown store URL scheme 'mysql'")
    assert stat.S_ISDIR(tmp_path.stat().st_mode) and not list(tmp_path.iterdir())  # nothing created


@pytest.mark.parametrize("url_suffix", ["", "?mode=ro"])
def test_a_store_in_a_folder_it_cannot_write_says_the_folder(tmp_path: Path, url_suffix: str) -> None:
    """SQLite's WAL files go beside the database: in a folder its user cannot write, a command
    said "attempt to write a readonly database", with mode=ro too, and the permission hint
    offered --read-only, which commands do not take (a CLI probe). Same privilege drop as above."""
    folder = tmp_path / "shared"
    folder.mkdir()
    store = folder / "jobs.db"

    async def make() -> None:
        async with Monque(f"sqlite:///{store}") as monque:
            await monque.enqueue("email")

    asyncio.run(make())
    assert sorted(p.name for p in folder.iterdir()) == ["jobs.db"]  # closed: no side files left
    store.chmod(0o666)
    folder.chmod(0o555)
    try:
        result = _unprivileged(tmp_path, "paused", f"sqlite:///{store}{url_suffix}")
    finally:
        folder.chmod(0o755)
    assert result.returncode == 3, result.stderr
    assert_one_line_error(result.stderr, f"directory {folder} is not writable", "make the directory writable")
    assert sorted(p.name for p in folder.iterdir()) == ["jobs.db"]


def test_an_export_into_a_folder_it_cannot_write_names_the_folder(tmp_path: Path) -> None:
    """The export is written beside its file and renamed over it: in a folder its user cannot
    write, "cannot write x.jsonl: permission denied" named the file, itself writable (a probe)."""
    store = tmp_path / "jobs.db"

    async def make() -> None:
        async with Monque(f"sqlite:///{store}") as monque:
            await monque.enqueue("email")

    asyncio.run(make())
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "jobs.jsonl"
    target.write_text("an earlier export\n")
    target.chmod(0o666)
    folder.chmod(0o555)
    tmp_path.chmod(0o777)  # the store's own folder stays writable for it
    try:
        result = _unprivileged(tmp_path, "export", "--output", str(target), f"sqlite:///{store}?mode=ro")
    finally:
        folder.chmod(0o755)
    assert result.returncode == 2, result.stderr
    assert_one_line_error(result.stderr, f"in the folder {folder}", "written beside the file")
    assert target.read_text() == "an earlier export\n"
