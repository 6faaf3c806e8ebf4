"""The jobs screen shows session events through one table (``JobsScreen._SHOWS``): every
event type the session emits is either in it or one the app alone handles, so a new event
type cannot be dropped on the floor without this test saying so."""

from __future__ import annotations

import typing

from monque_tui.console.screens.jobs import JobsScreen
from monque_tui.console.session import SessionEvent
from monque_tui.console.session.events import AlertsChanged, JobsChanged, Notice

#: Handled by the app (notifications, the detail and queues screens, the alerts line of every
#: screen), not drawn by this screen.
FOR_THE_APP = {JobsChanged, Notice, AlertsChanged}


def test_every_session_event_is_shown_or_deliberately_left_to_the_app() -> None:
    emitted = set(typing.get_args(SessionEvent))
    assert len(emitted) > 10  # the union is read, not an empty tuple
    assert set(JobsScreen._SHOWS) | FOR_THE_APP == emitted
    assert not set(JobsScreen._SHOWS) & FOR_THE_APP


def test_each_event_type_is_shown_by_a_method_that_takes_it() -> None:
    for event_type, show in JobsScreen._SHOWS.items():
        hints = typing.get_type_hints(show)
        assert hints["event"] is event_type, show.__name__
