"""A mistyped command or a URL with its slashes off is named as what it likely was (a CLI
probe: ``monque-tui exprot`` said "Store URL 'exprot' has no scheme", and ``mongodb:/h/db``
was offered "did you mean sqlite:///mongodb:/h/db?"). Exit 2, one line, nothing opened."""

from __future__ import annotations

import pytest

from monque_tui.cli.entry import main


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["exprot"], "'exprot' is not a command or a store URL; did you mean export?"),
        (["Export", "--read-only"], "did you mean export?"),
        (["help"], "for help: monque-tui --help"),
        (["sqlite:/small.db"], "did you mean sqlite:///small.db, or sqlite:////small.db for an absolute path?"),
        (["mongodb:/ops:s3cret@h/db"], "did you mean mongodb://ops:***@h/db?"),
        (["jobs.db"], "has no scheme (did you mean sqlite:///jobs.db?)"),
        (["list"], "'list' is not a command or a store URL; did you mean export?"),
        (["list", "--help"], "'list' is not a command or a store URL; did you mean export?"),
        (["canel", "--yes"], "'canel' is not a command or a store URL; did you mean cancel?"),
        (["stats", "-h"], "did you mean health?"),
        (["workers"], "did you mean instances?"),
    ],
)
def test_a_mistyped_word_is_named(words: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(words) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1 and "s3cret" not in err, err


@pytest.mark.parametrize("command", ["cancel", "export", "release-dead", "repair-counts"])
def test_a_command_is_never_taken_for_a_mistyped_one(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The check runs before argparse (for ``list --help``), so it must let every real command by."""
    assert main([command, "--help"]) == 0
    assert f"usage: monque-tui {command}" in capsys.readouterr().out
