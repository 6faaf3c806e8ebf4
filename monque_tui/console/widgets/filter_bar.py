"""The `/` filter bar: job name or name glob (``email*``, completed from the names in the store), id or unique key,
"contains" text (payload or error) and time ranges.

Name and id/key apply as they are typed; "contains" applies as it is typed too, but after a
short pause (``TEXT_DEBOUNCE``): it is a scan of payloads on a big store, not worth running
for every keystroke. Enter applies it at once. The time ranges (``created -2h..``, ``updated today``,
``next now..+1h``) apply on Enter, resolved against the console's clock. A range that cannot
be read shows one line saying what is wrong and what is accepted, and the view keeps the
ranges it had. While the "when" field holds text that is not applied, ``unapplied`` says so
and bulk actions refuse to run: what the bar shows is what an action applies.
"""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.suggester import SuggestFromList
from textual.timer import Timer
from textual.widget import AwaitMount
from textual.widgets import Input, Label, Static

from monque_engine.payload_filter import DataTerm

from ..clock import Clock, system_clock
from ..query import RANGE_HINT, RANGE_PLACEHOLDER, RangeError, TimeRange, parse_where
from .text_input import TextInput

#: Seconds of no typing before the "contains" text is applied.
TEXT_DEBOUNCE = 0.35
#: Below this many columns the four fields take two rows (name, id/key; when, contains). In
#: one row at 60 columns the name and id/key fields showed nothing of a value typed (a
#: filter in force looked empty) and "contains" had no room at all (probe 7).
TWO_ROWS_BELOW = 110


class FilterBar(Vertical):
    DEFAULT_CSS = """
    FilterBar { height: auto; display: none; padding: 0 1; background: $boost; }
    FilterBar.-open { display: block; }
    FilterBar > Horizontal { height: 3; }
    FilterBar Label { padding: 1 1 0 0; width: auto; }
    FilterBar #filter-name { width: 2fr; max-width: 28; }
    FilterBar #filter-search { width: 1.4fr; max-width: 20; }
    FilterBar #filter-text { width: 2.2fr; max-width: 30; }
    FilterBar #filter-when { width: 4fr; min-width: 20; }
    FilterBar.-narrow > Horizontal {
        layout: grid; grid-size: 4; grid-columns: auto 1fr auto 1fr; grid-rows: 3; height: 6;
    }
    FilterBar.-narrow #filter-name, FilterBar.-narrow #filter-search,
    FilterBar.-narrow #filter-text, FilterBar.-narrow #filter-when { width: 1fr; max-width: 100%; min-width: 0; }
    FilterBar #filter-hint { height: auto; max-height: 3; padding: 0 0 0 1; color: $text-muted; }
    FilterBar.-error #filter-hint { color: $text-error; text-style: bold; }
    """
    BINDINGS = [Binding("escape", "leave", "Leave the bar", show=True, key_display="Esc")]

    class Left(Message):
        """Esc in the bar: the keys go to the view again (the filter stays; Esc there clears it)."""

    class Changed(Message):
        def __init__(
            self,
            name: str | None,
            search: str | None,
            ranges: tuple[TimeRange, ...],
            done: bool,
            text: str | None = None,
            cleared: bool = False,
            data: tuple[DataTerm, ...] = (),
        ) -> None:
            super().__init__()
            self.name = name
            self.search = search
            self.ranges = ranges
            self.done = done
            #: Payload or error text contains this.
            self.text = text
            #: Esc: every filter goes, an errors-view group filter included.
            self.cleared = cleared
            #: Payload terms typed after the ranges (``data.customer_id missing``).
            self.data = data

    def __init__(self, blink: bool = True, clock: Clock = system_clock) -> None:
        super().__init__()
        self._blink = blink
        self._clock = clock
        #: The ranges last applied (a range that did not parse changes nothing).
        self.ranges: tuple[TimeRange, ...] = ()
        #: The payload terms last applied, from the same field (``query.parse_where``).
        self.data: tuple[DataTerm, ...] = ()
        #: The "when" text those ranges came from.
        self.applied_when = ""
        #: The "contains" text the view has (typing waits ``TEXT_DEBOUNCE`` before applying).
        self.applied_text: str | None = None
        self._debounce: Timer | None = None
        self._query_error = False
        self.error: str | None = None
        #: A name glob and the names it matched (shown in the hint line), or None.
        self.name_matches: tuple[str, list[str]] | None = None
        #: The four fields by id, once built (``_build_fields``).
        self._inputs: dict[str, Input] = {}
        self._mounting: AwaitMount | None = None
        #: The store's job names, for the name field's completion once it exists.
        self._names: list[str] | None = None

    def compose(self) -> ComposeResult:
        # Only the hint: the four fields are mounted once the first frame is out (``on_mount``),
        # or by the first open if that comes sooner. They are nine of the jobs screen's ~33
        # widgets, each styled and laid out before the first frame for a bar that is hidden
        # (issue 40: launch to first rows).
        yield Static(self._hint(), id="filter-hint", markup=False)

    def on_mount(self) -> None:
        self.call_after_refresh(self._build_fields)

    def _build_fields(self) -> None:
        """Mount the fields above the hint (once; ``_mounting`` awaits them)."""
        if self._inputs or not self.is_attached:
            return  # built; or the screen went before its first frame (a store that failed to open)
        fields: dict[str, Input] = {
            "filter-name": TextInput(placeholder="name, or glob email* (Tab)", id="filter-name"),
            "filter-search": TextInput(placeholder="id start/end, unique key", id="filter-search"),
            "filter-when": TextInput(placeholder=RANGE_PLACEHOLDER, id="filter-when"),
            "filter-text": TextInput(placeholder="payload or error text", id="filter-text"),
        }
        for field in fields.values():
            field.cursor_blink = self._blink
        if self._names is not None:
            fields["filter-name"].suggester = SuggestFromList(self._names, case_sensitive=True)
        self._inputs = fields
        labels = ("name", "id/key", "when", "contains")
        row = Horizontal(
            *(w for label, field in zip(labels, fields.values(), strict=True) for w in (Label(label), field))
        )
        self._mounting = self.mount(row, before=0)

    def _value(self, field_id: str) -> str:
        """A field's text; "" while the fields are not built yet (nothing can have been typed)."""
        field = self._inputs.get(field_id)
        return "" if field is None else field.value.strip()

    def set_names(self, names: list[str]) -> None:
        self._names = names
        field = self._inputs.get("filter-name")
        if field is not None:
            field.suggester = SuggestFromList(names, case_sensitive=True)

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        self.set_class(width < TWO_ROWS_BELOW, "-narrow")

    def open(self) -> None:
        self._fit(self.app.size.width)
        self.add_class("-open")
        self._build_fields()
        name = self._inputs.get("filter-name")
        if name is None:
            return  # not attached: nothing to type into
        if name.is_mounted:
            # At once, not ``focus()`` (a callback queued behind the keys already waiting): keys
            # that arrive in one burst with the ``/`` (a paste, a slow ssh link) went to the
            # table, and ``/email`` opened the errors view (``e``) instead of filtering.
            self.screen.set_focus(name)
        else:
            self.call_later(self._focus_when_mounted)

    async def _focus_when_mounted(self) -> None:
        """Opened before the fields were mounted (``/`` within a frame of the first rows):
        focus the name field as soon as it is. The fields mount a frame after the first rows,
        so by the time a person presses ``/`` they are normally there already."""
        if self._mounting is not None:
            await self._mounting
        self.screen.set_focus(self._inputs["filter-name"])

    def close(self) -> None:
        self.remove_class("-open")

    @property
    def values(self) -> tuple[str | None, str | None]:
        return self._value("filter-name") or None, self._value("filter-search") or None

    @property
    def text(self) -> str | None:
        return self._value("filter-text") or None

    def _post(self, done: bool) -> None:
        """Tell the screen what the bar says now (the "contains" text included, applied from here on)."""
        self._cancel_debounce()
        if self._query_error:
            self._show_error(None)  # a new query: the old one's failure no longer applies
        name, search = self.values
        self.applied_text = self.text
        self.post_message(self.Changed(name, search, self.ranges, done=done, text=self.applied_text, data=self.data))

    def _cancel_debounce(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None

    def show_query_error(self, message: str) -> None:
        """The store could not answer the view (a MongoDB text search timed out): say so here, inline."""
        self._build_fields()
        self.add_class("-open")
        self._show_error(f"✗ {message}")
        self._query_error = True

    def _show_error(self, message: str | None) -> None:
        self._query_error = False
        self.error = message
        self.query_one("#filter-hint", Static).update(message or self._hint())
        self.set_class(message is not None, "-error")

    def show_name_matches(self, pattern: str | None, names: list[str] | None) -> None:
        """What a name glob matched ("name email* → 3 names: …"), shown above the range help."""
        matches = None if pattern is None or names is None else (pattern, names)
        if matches == self.name_matches:
            return
        self.name_matches = matches
        if self.error is None:
            try:
                self.query_one("#filter-hint", Static).update(self._hint())
            except NoMatches:
                pass  # not composed yet: compose shows the hint

    def _hint(self) -> str:
        if self.name_matches is None:
            return RANGE_HINT
        pattern, names = self.name_matches
        count = f"{len(names)} name" + ("" if len(names) == 1 else "s")
        listed = ", ".join(names[:6]) + (f", +{len(names) - 6}" if len(names) > 6 else "")
        return f"name {pattern} → {count}" + (f": {listed}" if names else " (no job has a matching name)")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            ranges, data = parse_where(self.query_one("#filter-when", Input).value, self._clock())
        except RangeError as error:
            self._show_error(f"✗ {error}")
            self.query_one("#filter-when", Input).focus()
            return
        self._show_error(None)
        self.ranges = ranges
        self.data = data
        self.applied_when = self.query_one("#filter-when", Input).value.strip()
        self._post(done=True)

    @property
    def unapplied(self) -> str | None:
        """Why the view differs from what the bar shows (a typed time range not yet applied), or None."""
        if self.text != self.applied_text:
            return f"The text {self.text or ''!r} in the filter bar is still being applied: try again in a moment."
        typed = self._value("filter-when")
        if typed == self.applied_when:
            return None
        if self.error is not None:
            return (
                f"The filter {typed!r} in the filter bar is not applied (the line under the bar says why): "
                "press / and correct it, or Esc to clear the filter."
            )
        return (
            f"The filter {typed!r} in the filter bar is not applied yet: press / then Enter to apply it, "
            "or Esc to clear the filter."
        )

    @on(Input.Changed, "#filter-name")
    @on(Input.Changed, "#filter-search")
    def _search_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._post(done=False)

    @on(Input.Changed, "#filter-when")
    def _when_changed(self, event: Input.Changed) -> None:
        """A range error is about the text typed: once that field is emptied, the line goes too
        (it stayed under the bar, describing text no longer there)."""
        event.stop()
        if self.error is not None and not self._query_error and not event.value.strip():
            self._show_error(None)

    @on(Input.Changed, "#filter-text")
    def _text_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self._query_error and not event.value.strip():
            self._show_error(None)  # the text the store could not search is gone
        self._cancel_debounce()
        if self.text == self.applied_text:
            return
        self._debounce = self.set_timer(TEXT_DEBOUNCE, lambda: self._post(done=False))

    def reset_fields(self) -> None:
        """Empty every field without asking for a view (the caller shows one: the errors view's group)."""
        self._cancel_debounce()
        with self.prevent(Input.Changed):
            for field in self.query(Input):
                field.value = ""
        self.ranges = ()
        self.data = ()
        self.applied_when = ""
        self.applied_text = None
        self._show_error(None)
        self.close()

    def action_leave(self) -> None:
        """Leave the bar for the view, keeping what is applied.

        Enter applies and stays here: it once moved the focus to the table, and the letters
        typed next (``updated -10m..now``, "yesterday") fired the table's keys, ``r`` then
        ``y`` retrying a job. Text entry ends only with Esc (here) or Tab past the last field.
        An empty bar closes as it leaves; one with a filter stays open, showing it."""
        if not any(field.value.strip() for field in self.query(Input)):
            self.close()
        self.post_message(self.Left())

    def action_clear(self) -> None:
        for field in self.query(Input):
            field.value = ""
        self.ranges = ()
        self.data = ()
        self.applied_when = ""
        self._cancel_debounce()
        self.applied_text = None
        self._show_error(None)
        self.close()
        self.post_message(self.Changed(None, None, (), done=True, cleared=True))
