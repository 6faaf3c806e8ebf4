"""One hub in the console (issue 35): the app reaches the engine only through the session,
and screens reach the app only through the ``ConsoleApp`` Protocol and intents, never a cast.

The app called ``Monque`` itself for ``P`` (pause), ``x`` (release a dead owner) and ``q``
(stop this console's workers), beside the session that was meant to own the store; three
screens did ``cast("ConsoleApp", self.app)``, a promise mypy could not check. Read from the
source (AST), so a new way round is caught before it runs. The import side is also an
import-linter contract (``console-app-no-engine`` in pyproject.toml).
"""

from __future__ import annotations

import ast
from pathlib import Path

CONSOLE = Path(__file__).resolve().parents[2] / "monque_tui" / "console"
#: What app.py may import from the engine: text helpers, no engine call.
APP_MAY_IMPORT = frozenset({"monque_engine.store.urls"})
#: Names that mean the console app, in a cast's arguments.
APP_NAMES = frozenset({"ConsoleApp", "MonqueConsole"})


def engine_reaches(source: str) -> list[str]:
    """Every engine import (beyond ``APP_MAY_IMPORT``) and every ``.monque`` in ``source``, by line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "monque_engine" and node.module not in APP_MAY_IMPORT:
                found.append(f"{node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: import {alias.name}"
                for alias in node.names
                if alias.name.split(".")[0] == "monque_engine"
            ]
        elif isinstance(node, ast.Attribute) and node.attr == "monque":
            found.append(f"{node.lineno}: .monque (the session's engine: ask the session instead)")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "monque":
            found.append(f"{node.lineno}: def monque (hands the engine out)")
    return found


def app_casts(source: str) -> list[str]:
    """Every ``cast(...)`` whose arguments name the app (``self.app``, ``ConsoleApp``), by line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if name != "cast":
            continue
        for arg in node.args:
            names = {sub.attr for sub in ast.walk(arg) if isinstance(sub, ast.Attribute)}
            names |= {sub.id for sub in ast.walk(arg) if isinstance(sub, ast.Name)}
            texts = {sub.value for sub in ast.walk(arg) if isinstance(sub, ast.Constant) and isinstance(sub.value, str)}
            if "app" in names or names & APP_NAMES or any(app in text for text in texts for app in APP_NAMES):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
                break
    return found


def test_the_app_makes_no_engine_call() -> None:
    found = engine_reaches((CONSOLE / "app.py").read_text(encoding="utf-8"))
    assert not found, "console/app.py reaches the engine; give the session a method instead:\n" + "\n".join(found)


def test_no_screen_casts_the_app() -> None:
    found = {
        path.name: casts
        for path in sorted((CONSOLE / "screens").glob("*.py"))
        if (casts := app_casts(path.read_text(encoding="utf-8")))
    }
    assert not found, f"screens cast the app; take it as ConsoleApp when built (protocol.py): {found}"


def test_the_checks_catch_what_the_console_did_before() -> None:
    """Not vacuous: the lines the app and the screens had are each reported."""
    before_app = """
from monque_engine import Monque
class MonqueConsole:
    @property
    def monque(self) -> Monque | None:
        return self.session.monque
    async def toggle_name_pause(self, name):
        monque = self.session.monque
        await monque.pause(name)
"""
    assert len(engine_reaches(before_app)) == 4
    assert engine_reaches("from monque_engine.store.urls import mask_text\nimport monque_engine.store\n") == [
        "2: import monque_engine.store"
    ]
    before_screen = """
from typing import cast, TYPE_CHECKING
import typing
class JobsScreen:
    @property
    def console(self) -> ConsoleApp:
        return cast("ConsoleApp", self.app)
    def other(self):
        typing.cast(MonqueConsole, x)
        cast(int, self.app)
        cast(int, 3)
"""
    assert [line.split(":")[0] for line in app_casts(before_screen)] == ["7", "9", "10"]
