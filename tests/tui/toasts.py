"""What the console's notifications show, read from the screen as a user reads them.

``App.notify`` puts each notification in a toast on the current screen; the toasts are
Textual widgets of type ``Toast``, and a widget's ``render()`` is public. Reading them
replaces reading ``App._notifications``, Textual's private collection. Like that
collection, the toasts hold the notifications that have not yet expired (a screen that
becomes current shows them again), so a test waits for a toast with ``wait_for`` and never
needs one that has timed out.

A toast with a title shows it on its first line, then the message.
"""

from __future__ import annotations

from textual.app import App
from textual.widget import Widget


def toasts(app: App[object]) -> list[Widget]:
    """The toasts on the current screen, oldest first. A toast's severity is its CSS class
    (``toast.has_class("-warning")``)."""
    return list(app.screen.query("Toast"))  # by type name: Textual exports no Toast class


def text_of(toast: Widget) -> str:
    """What a toast shows: its title's line (if any), then its message."""
    return str(toast.render())


def message_of(toast: Widget, title: str) -> str:
    """The message of a toast that shows ``title`` on its first line (asserted)."""
    shown_title, _, message = text_of(toast).partition("\n")
    assert shown_title == title, text_of(toast)
    return message


def toast_texts(app: App[object]) -> list[str]:
    """What each toast on the current screen shows."""
    return [text_of(toast) for toast in toasts(app)]


def toast_lines(app: App[object]) -> list[str]:
    """Every line of every toast on the current screen: titles and messages."""
    return [line for text in toast_texts(app) for line in text.splitlines()]


def toast_messages(app: App[object], title: str) -> list[str]:
    """The messages of the toasts titled ``title`` (their text after the title's line)."""
    return [text.split("\n", 1)[1] for text in toast_texts(app) if "\n" in text and text.split("\n", 1)[0] == title]


def said(app: App[object], text: str) -> bool:
    """Whether a toast on the current screen shows ``text`` (anywhere in a line)."""
    return any(text in line for line in toast_lines(app))


def said_first(app: App[object], prefix: str) -> bool:
    """Whether a line of a toast on the current screen begins with ``prefix``."""
    return any(line.startswith(prefix) for line in toast_lines(app))
