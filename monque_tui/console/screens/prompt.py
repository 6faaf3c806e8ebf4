"""A question answered on one line: the base of the reschedule and export dialogs.

Both dialogs are the same interaction (a bold question, a muted hint, one input, Enter
submits, Esc cancels, a bad answer is explained inline and the dialog stays), so the
behaviour lives here once and each dialog only says how to read its answer.
"""

from __future__ import annotations

from typing import ClassVar, Generic, TypeVar

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from ..widgets.console_footer import ConsoleFooter
from ..widgets.text_input import TextInput

Answer = TypeVar("Answer")


class PromptError(ValueError):
    """An answer the dialog cannot use; its text is shown under the input."""


class PromptScreen(ModalScreen[Answer | None], Generic[Answer]):
    """Dismissed with the parsed answer, or ``None`` on Esc (and on an empty answer if ``parse`` says so)."""

    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen > Vertical { height: auto; background: $surface; padding: 1 2; }
    PromptScreen .prompt-question { text-style: bold; width: 100%; height: auto; }
    PromptScreen .prompt-hint { color: $text-muted; width: 100%; height: auto; }
    PromptScreen .prompt-error { color: $error; height: auto; }
    """
    #: Widget ids are ``{ID_PREFIX}-question``, ``{ID_PREFIX}-input`` and ``{ID_PREFIX}-error``.
    ID_PREFIX: ClassVar[str] = "prompt"

    def __init__(
        self,
        question: str,
        hint: str,
        value: str = "",
        placeholder: str = "",
        blink: bool = True,
        select_on_focus: bool = True,
    ) -> None:
        super().__init__()
        self.question = question
        self.hint = hint
        self._value = value
        self._placeholder = placeholder
        self._blink = blink
        #: False: the cursor starts at the end of the prefilled answer, nothing selected, so one
        #: Backspace edits it instead of wiping it (the export path; issue 40).
        self._select_on_focus = select_on_focus

    def compose(self) -> ComposeResult:
        prefix = self.ID_PREFIX
        with Vertical():
            yield Label(self.question, id=f"{prefix}-question", classes="prompt-question", markup=False)
            yield Static(self.hint, classes="prompt-hint", markup=False)
            yield TextInput(
                self._value,
                placeholder=self._placeholder,
                id=f"{prefix}-input",
                select_on_focus=self._select_on_focus,
            )
            error = Static("", id=f"{prefix}-error", classes="prompt-error", markup=False)
            error.display = False  # no empty line under the input until there is something to say
            yield error
        yield ConsoleFooter()  # its own keys, not the dead ones of the screen below

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = self._blink
        field.focus()
        if not self._select_on_focus:
            field.cursor_position = len(field.value)

    def parse(self, text: str) -> Answer | None:
        """The answer for ``text``; raise ``PromptError`` to keep the dialog open with a message."""
        raise NotImplementedError

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        try:
            answer = self.parse(event.value)
        except PromptError as error:
            line = self.query_one(f"#{self.ID_PREFIX}-error", Static)
            line.update(str(error))
            line.display = True
            return
        self.dismiss(answer)

    def action_cancel(self) -> None:
        self.dismiss(None)
