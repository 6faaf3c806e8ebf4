"""Ctrl+C in the first tenth of a second, while the command's modules import, printed a
KeyboardInterrupt traceback and the process died by the signal (a CLI probe). It is one line
and exit 130 now. The import is made to meet the interrupt, so the test does not race it."""

from __future__ import annotations

import sys
import types

import pytest

from monque_tui import cli


def test_ctrl_c_while_the_modules_import_is_one_line_and_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    interrupted = types.ModuleType("monque_tui.cli.entry")

    def __getattr__(name: str) -> object:  # the import of ``main`` meets the ctrl+c
        raise KeyboardInterrupt

    interrupted.__getattr__ = __getattr__  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "monque_tui.cli.entry", interrupted)
    monkeypatch.setattr(cli, "entry", interrupted, raising=False)
    assert cli.main(["health"]) == 130
    err = capsys.readouterr().err
    assert err == "monque-tui: stopped by ctrl+c while starting\n" and "Traceback" not in err
