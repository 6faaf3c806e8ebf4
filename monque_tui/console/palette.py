"""The command palette's console commands, from the binding registry.

Titles such as ``Filter [/]`` contain square brackets, which Textual reads as markup when
a hit's prompt is a plain string (``[/]`` is a closing tag and crashed the palette). Every
title and help text here is therefore handed over as ``Content`` built from plain text,
never parsed as markup, and fuzzy-match highlighting is applied to that plain text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any, NamedTuple

from textual.actions import parse as parse_action
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.screen import Screen

from .bindings import Scope, entries_for


class PaletteCommand(NamedTuple):
    title: str
    help: str
    run: Callable[[], Awaitable[None]]


def palette_commands(app: Any, screen: Screen[Any]) -> Iterator[PaletteCommand]:
    """Every registry action that applies on ``screen`` now (read-only and status rules included)."""
    scopes: tuple[Scope, ...] = getattr(screen, "SCOPES", ("app",))
    seen: set[str] = set()
    for spec in entries_for(*scopes):
        if not spec.palette or spec.action in seen:
            continue
        seen.add(spec.action)
        _, name, params = parse_action(spec.action)
        target: Any = app if "app" in spec.scopes else screen
        if "table" in spec.scopes:
            target = getattr(screen, "table", screen)
        if not target.check_action(name, params):
            continue
        keys = spec.key_display or spec.keys.split(",")[0]
        yield PaletteCommand(
            f"{spec.description} [{keys}]", spec.help or spec.description, _runner(target, spec.action)
        )


def _runner(target: Any, action: str) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        await target.run_action(action)

    return run


class ConsoleCommands(Provider):
    """Offers ``palette_commands`` with literal (never markup) titles."""

    def _commands(self) -> list[PaletteCommand]:
        return list(palette_commands(self.app, self.screen))

    async def discover(self) -> Hits:
        for command in self._commands():
            # Content, not str: Textual would parse a str help as markup ("[/]" in a title).
            yield DiscoveryHit(Content(command.title), command.run, text=command.title, help=Content(command.help))  # type: ignore[arg-type]

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score, offsets = matcher.fuzzy_search.match(query, command.title)
            if score > 0:
                display = Content(command.title)
                for offset in offsets:
                    if not command.title[offset].isspace():
                        display = display.stylize(matcher.match_style, offset, offset + 1)
                yield Hit(score, display, command.run, text=command.title, help=Content(command.help))  # type: ignore[arg-type]
