"""Confirmation of a job action: says exactly what will happen and to how many jobs."""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from ..actions import VERBS, ActionKind, ActionPlan
from ..widgets.console_footer import ConsoleFooter
from ..widgets.text_input import TextInput


class ConfirmScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 90%; max-width: 100; height: auto; border: thick $error; background: $surface; padding: 1 2;
    }
    ConfirmScreen.-mild > Vertical { border: thick $warning; }
    ConfirmScreen #confirm-question { text-style: bold; margin-bottom: 1; width: 100%; height: auto; }
    ConfirmScreen .confirm-detail { width: 100%; height: auto; }
    ConfirmScreen .confirm-detail { color: $text-muted; }
    ConfirmScreen Input { margin-top: 1; }
    ConfirmScreen #confirm-typed-error { color: $text-error; height: auto; }
    ConfirmScreen Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    ConfirmScreen Button { margin-left: 2; }
    ConfirmScreen.-narrow Button { min-width: 0; margin-left: 1; }
    """
    BINDINGS = [
        Binding("escape,n", "refuse", "Keep jobs as they are", key_display="Esc"),
        Binding("y", "accept", "Confirm"),
        # Ctrl+C at a prompt aborts it, as in any terminal program (it did nothing; probe 5).
        Binding("ctrl+c", "refuse", "Keep jobs as they are", show=False, priority=True),
    ]

    def __init__(self, plan: ActionPlan, blink: bool = True) -> None:
        super().__init__()
        self.plan = plan
        self._blink = blink
        if plan.kind is ActionKind.RETRY:
            self.add_class("-mild")

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.plan.question, id="confirm-question", markup=False)
            for line in self.plan.details:
                yield Static(line, classes="confirm-detail", markup=False)
            if self.plan.needs_typed_confirmation:
                yield TextInput(placeholder=f"type {self.plan.count} to confirm", id="confirm-typed")
                yield Static("", id="confirm-typed-error", markup=False)
            with Horizontal():
                yield Button("Keep (n)", id="refuse", variant="default")
                verb = VERBS[self.plan.kind][0]
                yield Button(
                    f"{verb} (y)", id="accept", variant="warning" if self.plan.kind is ActionKind.RETRY else "error"
                )
        # Its own keys in the footer: the screen's below showed c, r, t, d, dead while this is open.
        yield ConsoleFooter()

    def on_mount(self) -> None:
        if self.plan.needs_typed_confirmation:
            typed = self.query_one("#confirm-typed", Input)
            typed.cursor_blink = self._blink
            typed.focus()
            self.query_one("#accept", Button).disabled = True
        else:
            self.query_one("#refuse", Button).focus()

    @property
    def typed_ok(self) -> bool:
        if not self.plan.needs_typed_confirmation:
            return True
        return self.query_one("#confirm-typed", Input).value.strip().replace(",", "") == str(self.plan.count)

    @on(Input.Changed, "#confirm-typed")
    def _typed(self) -> None:
        self.query_one("#accept", Button).disabled = not self.typed_ok
        self.query_one("#confirm-typed-error", Static).update("")

    @on(Input.Submitted, "#confirm-typed")
    def _typed_submitted(self) -> None:
        self.action_accept()

    @on(Button.Pressed, "#accept")
    def _accept_pressed(self) -> None:
        self.action_accept()

    @on(Button.Pressed, "#refuse")
    def _refuse_pressed(self) -> None:
        self.action_refuse()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("accept", "refuse") and isinstance(self.focused, Input):
            return action == "refuse" or None  # typing "y" or "n" into the field is text, not a key
        return True

    def action_accept(self) -> None:
        if self.typed_ok:
            self.dismiss(True)
            return
        # Enter on a wrong count did nothing at all (probe finding): say what is expected.
        typed = self.query_one("#confirm-typed", Input).value.strip()
        self.query_one("#confirm-typed-error", Static).update(
            f"Type {self.plan.count} exactly to {self.plan.kind.value} "
            + (f"(not {typed!r})" if typed else "(the field is empty)")
            + "; Esc keeps the jobs as they are."
        )

    def on_resize(self, event: events.Resize) -> None:
        """Below 60 columns the buttons take their labels' width: at 40 the default 16-cell
        buttons cut "Cancel (y)" to "Cancel" (probe 5)."""
        self.set_class(event.size.width < 60, "-narrow")

    def action_refuse(self) -> None:
        self.dismiss(False)
