"""``change_event``: the feed's fast constructor builds the same, still frozen, ``ChangeEvent``."""

from __future__ import annotations

import dataclasses

import pytest

from monque_engine import ChangeEvent, JobStatus
from monque_engine.job import _CHANGE_FIELDS, change_event


def test_it_sets_every_field_of_the_dataclass_in_order():
    # A field added to ChangeEvent and not to the fast path would be left unset (an
    # AttributeError on read): the two lists must stay the same.
    assert tuple(f.name for f in dataclasses.fields(ChangeEvent)) == _CHANGE_FIELDS


def test_it_equals_the_dataclass_constructor_and_stays_frozen():
    args = ("update", "67880000000000000000002a", None, 42, "email.send", JobStatus.COMPLETED, 1_700_000_000_000, False)
    fast = change_event(*args)  # type: ignore[arg-type]
    slow = ChangeEvent(*args)  # type: ignore[arg-type]
    assert type(fast) is ChangeEvent
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.status = JobStatus.FAILED  # type: ignore[misc]
    assert dataclasses.replace(fast, stop_requested=True).stop_requested is True
