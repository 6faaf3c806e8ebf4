"""One parser for ``monque-tui`` and its commands (issue 35), run as the real command.

There were two (entry.py's for the console's modes, commands.py's for ``pause``, ``export``,
...), each with its own store URL and ``--connect-timeout``. Now parser.py defines every form;
the root's ``--help`` lists every command from its definition, and the first word settles
which form a command line is, explicitly: a command's exact name is the command, anything
else is the console's form (a store URL always has a scheme).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from monque_tui.cli.commands import _HANDLERS, _OPENS_NO_MONQUE
from monque_tui.cli.parser import COMMANDS, command_parser

CLI = Path(__file__).resolve().parents[2] / "monque_tui" / "cli"


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "monque_tui", *args],
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def one_usage_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("monque-tui: error: "), result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr.strip()


def test_the_root_help_lists_every_command(tmp_path: Path) -> None:
    result = run("--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: monque-tui [OPTIONS] [URL]\n       monque-tui COMMAND [OPTIONS] [URL]")
    listed = [line.split()[1] for line in result.stdout.splitlines() if line.startswith("  monque-tui ")]
    for command in COMMANDS:
        assert command in listed, f"monque-tui --help does not list {command}"
    assert "--worker" in result.stdout and "MONQUE_CONNECT_TIMEOUT" in result.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_its_help(tmp_path: Path, command: str) -> None:
    result = run(command, "--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: monque-tui {command} "), result.stdout
    for shared in ("--url URL", "--collection NAME", "--connect-timeout SECONDS", "MONQUE_CONNECT_TIMEOUT"):
        assert shared in result.stdout, f"{command} --help lacks {shared}"
    assert os.listdir(tmp_path) == []  # help opens no store


def test_a_command_name_in_the_urls_place_is_said_to_be_a_command(tmp_path: Path) -> None:
    """``monque-tui --read-only export``: not "Store URL 'export' has no scheme"."""
    line = one_usage_line(run("--read-only", "export", cwd=tmp_path))
    assert "'export' is a command, not a store URL: put it first (monque-tui export ... [URL]" in line
    assert os.listdir(tmp_path) == []


def test_a_url_whose_file_is_named_like_a_command_is_the_consoles_url(tmp_path: Path) -> None:
    """``sqlite:///pause`` is a store URL for the console (which then wants a terminal), not ``pause``."""
    line = one_usage_line(run("sqlite:///pause", cwd=tmp_path))
    assert "the console needs a terminal" in line
    assert os.listdir(tmp_path) == []


def test_a_command_first_takes_a_url_named_like_another_command(tmp_path: Path) -> None:
    """``export sqlite:///pause``: the export command, on a file that happens to be called pause."""
    result = run("export", "sqlite:///pause", cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert "pause does not exist; check the path (this command never creates one)" in result.stderr
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("form", [[], ["paused"]], ids=["console", "command"])
def test_connect_timeout_is_one_option_in_both_forms(tmp_path: Path, form: list[str]) -> None:
    """Written once: the same flag, bounds and message, and the same environment variable."""
    line = one_usage_line(run(*form, "--connect-timeout", "inf", cwd=tmp_path))
    assert "argument --connect-timeout: 'inf': expected a finite number of seconds" in line
    line = one_usage_line(run(*form, cwd=tmp_path, env={"MONQUE_CONNECT_TIMEOUT": "0"}))
    assert "MONQUE_CONNECT_TIMEOUT='0': expected a number of seconds above 0" in line


def test_every_command_is_defined_once_and_handled() -> None:
    assert set(_HANDLERS) | set(_OPENS_NO_MONQUE) == set(COMMANDS)
    assert not set(_HANDLERS) & set(_OPENS_NO_MONQUE)
    for command in COMMANDS:
        flags = {flag for action in command_parser(command)._actions for flag in action.option_strings}
        assert {"--url", "--collection", "--connect-timeout"} <= flags, command


def test_only_parser_py_builds_parsers() -> None:
    """One module owns argument parsing: no other CLI module builds or runs an argparse parser."""
    owners = {}
    for path in sorted(CLI.glob("*.py")):
        if path.name == "parser.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
                if name in ("ArgumentParser", "add_subparsers", "parse_args", "parse_intermixed_args"):
                    owners.setdefault(path.name, []).append(f"{node.lineno}: {name}")
    assert not owners, f"argument parsing outside parser.py: {owners}"
