"""Which statuses each management action may touch: the guards, written once, above the
backends (issue 35, design item 2).

The scheduler (``scheduler/manager.py``) applies a guard to a bulk selector and judges a
single write that missed; each backend writes it into its statement (SQLite's ``WHERE
status IN (...)``, MongoDB's filter document), so the check and the write are one atomic
step. All three read these tuples, and ``tests/test_store_guards.py`` checks each backend
refuses exactly the statuses outside them. ``delete`` has no guard: any job may be deleted.

The statements themselves stay per backend (a retry is a guarded SQL ``UPDATE`` on one side
and a pipeline update on the other); only which statuses they accept is shared.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from ..job import JobStatus

#: A pending job may be cancelled; one already running, finished or cancelled may not.
CANCEL: Final = (JobStatus.PENDING,)
#: Only a job that ended without success (failed, or cancelled) may be run again.
RETRY: Final = (JobStatus.FAILED, JobStatus.CANCELLED)
#: Only a job still waiting to run has a run time to move.
RESCHEDULE: Final = (JobStatus.PENDING,)

#: Only a running job can be asked to stop (issue 37): its owner ends it cancelled.
STOP: Final = (JobStatus.PROCESSING,)

#: Each guarded action's statuses, by the action's name (the bulk and single calls' name).
GUARDS: Final[Mapping[str, tuple[JobStatus, ...]]] = MappingProxyType(
    {"cancel": CANCEL, "retry": RETRY, "reschedule": RESCHEDULE, "stop": STOP}
)


def values(statuses: tuple[JobStatus, ...]) -> tuple[str, ...]:
    """The guard's statuses as the plain strings a statement binds or a document holds."""
    return tuple(status.value for status in statuses)


__all__ = ["CANCEL", "GUARDS", "RESCHEDULE", "RETRY", "STOP", "values"]
