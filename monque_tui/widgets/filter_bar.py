"""The `/` filter bar: job name (completed from the names in the store) and free text."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label


class FilterBar(Horizontal):
    DEFAULT_CSS = """
    FilterBar { height: 3; display: none; padding: 0 1; background: $boost; }
    FilterBar.-open { display: block; }
    FilterBar Label { padding: 1 1 0 0; width: auto; }
    FilterBar #filter-name { width: 1fr; max-width: 40; }
    FilterBar #filter-search { width: 1fr; }
    """
    BINDINGS = [Binding("escape", "clear", "Clear filter", show=True)]

    class Changed(Message):
        def __init__(self, name: str | None, search: str | None, done: bool) -> None:
            super().__init__()
            self.name = name
            self.search = search
            self.done = done

    def __init__(self, blink: bool = True) -> None:
        super().__init__()
        self._blink = blink

    def compose(self) -> ComposeResult:
        yield Label("name")
        yield Input(placeholder="job name (tab completes)", id="filter-name")
        yield Label("text")
        yield Input(placeholder="id prefix or unique key", id="filter-search")

    def on_mount(self) -> None:
        for field in self.query(Input):
            field.cursor_blink = self._blink

    def set_names(self, names: list[str]) -> None:
        self.query_one("#filter-name", Input).suggester = SuggestFromList(names, case_sensitive=True)

    def open(self) -> None:
        self.add_class("-open")
        self.query_one("#filter-name", Input).focus()

    def close(self) -> None:
        self.remove_class("-open")

    @property
    def values(self) -> tuple[str | None, str | None]:
        name = self.query_one("#filter-name", Input).value.strip() or None
        search = self.query_one("#filter-search", Input).value.strip() or None
        return name, search

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        name, search = self.values
        self.post_message(self.Changed(name, search, done=True))

    @on(Input.Changed, "#filter-search")
    def _search_changed(self, event: Input.Changed) -> None:
        event.stop()
        name, search = self.values
        self.post_message(self.Changed(name, search, done=False))

    def action_clear(self) -> None:
        for field in self.query(Input):
            field.value = ""
        self.close()
        self.post_message(self.Changed(None, None, done=True))
