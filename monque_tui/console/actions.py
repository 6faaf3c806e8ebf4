"""Job actions as plans: what will be done, to which jobs, how many, in words.

A plan is built before anything is written, shown in the confirmation, then executed
through the engine's management API. Targets are either explicit jobs (marked rows or the
cursor row) or *everything matching the view* through the bulk selector calls.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

from monque_engine import (
    BulkCount,
    CountProgress,
    InvalidJobDocumentError,
    Job,
    JobListFilter,
    JobStateError,
    JobStatus,
    Monque,
    MonqueError,
    StopRefusedError,
)
from monque_engine.payload_filter import describe_terms
from monque_engine.selector_rules import selects_every_job
from monque_engine.timeutil import ms_to_datetime

from .formatting import absolute, plural, short_id
from .longtext import clip_line
from .query import JobQuery


class ActionKind(StrEnum):
    CANCEL = "cancel"
    RETRY = "retry"
    RESCHEDULE = "reschedule"
    DELETE = "delete"
    #: Stop running jobs (issue 37): ``c`` on a processing row, and ``C``'s second question.
    STOP = "stop"


ELIGIBLE: dict[ActionKind, tuple[JobStatus, ...]] = {
    ActionKind.CANCEL: (JobStatus.PENDING,),
    ActionKind.RETRY: (JobStatus.FAILED, JobStatus.CANCELLED),
    ActionKind.RESCHEDULE: (JobStatus.PENDING,),
    ActionKind.DELETE: tuple(JobStatus),
    ActionKind.STOP: (JobStatus.PROCESSING,),
}
VERBS: dict[ActionKind, tuple[str, str]] = {
    ActionKind.CANCEL: ("Cancel", "Cancelled"),
    ActionKind.RETRY: ("Retry", "Retried"),
    ActionKind.RESCHEDULE: ("Reschedule", "Rescheduled"),
    ActionKind.DELETE: ("Delete", "Deleted"),
    ActionKind.STOP: ("Stop", "Asked to stop"),
}
NOT_ELIGIBLE: dict[ActionKind, str] = {
    ActionKind.CANCEL: "were not pending",
    ActionKind.RETRY: "were not failed or cancelled",
    ActionKind.RESCHEDULE: "were not pending",
    ActionKind.DELETE: "could not be deleted",
    ActionKind.STOP: "were not running",
}
CONSEQUENCES: dict[ActionKind, str] = {
    ActionKind.CANCEL: "They stay in the store as cancelled and will not run.",
    ActionKind.RETRY: "They go back to pending with their attempts reset and run again.",
    ActionKind.RESCHEDULE: "Their next run moves to the new time.",
    ActionKind.DELETE: "They are removed from the store. This cannot be undone.",
    ActionKind.STOP: (
        "Each owner cancels the handler (a sync one is asked through job.should_stop()) and the job ends "
        "cancelled. Jobs of owners not in the instance registry (Node, older Python) or dead are left alone."
    ),
}
#: The same, of one job ("Delete job ac0f7668? They are removed" read wrong).
CONSEQUENCES_OF_ONE: dict[ActionKind, str] = {
    ActionKind.CANCEL: "It stays in the store as cancelled and will not run.",
    ActionKind.RETRY: "It goes back to pending with its attempts reset and runs again.",
    ActionKind.RESCHEDULE: "Its next run moves to the new time.",
    ActionKind.DELETE: "It is removed from the store. This cannot be undone.",
    ActionKind.STOP: CONSEQUENCES[ActionKind.STOP],
}
#: Bulk operations that cover the whole store need the count typed back.


def eligible(kind: ActionKind, status: JobStatus) -> bool:
    return status in ELIGIBLE[kind]


def key_applies(kind: ActionKind, status: JobStatus) -> bool:
    """Whether an action's key does something for a job in ``status``: ``c`` / ``C`` also
    reach running jobs, which they ask to stop (issue 37)."""
    return eligible(kind, status) or (kind is ActionKind.CANCEL and status is JobStatus.PROCESSING)


def statuses_for(kind: ActionKind) -> str:
    """``pending`` / ``failed or cancelled``: the statuses an action applies to, in words."""
    names = [status.value for status in ELIGIBLE[kind]]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


@dataclass(frozen=True, slots=True)
class ActionPlan:
    """A bulk or marked action as the confirmation shows it, before it reaches the store."""

    kind: ActionKind
    #: Explicit targets that are eligible now (None for a bulk plan).
    job_ids: tuple[str, ...] | None
    #: Explicit targets left alone because of their status.
    skipped: int
    #: Bulk: the view whose matching jobs are targeted.
    query: JobQuery | None
    #: How many jobs will be affected (a bulk count is taken when the plan is made).
    count: int
    #: What the targets are, in words ("3 marked jobs", "job 1a2b3c4d (send-email)").
    subject: str
    run_at: datetime | None = None
    #: Bulk: the instant (ms, wall clock) the count was taken (what the dialog's age is read from).
    as_of_ms: int | None = None
    #: Bulk: the count as the engine returned it, with the store position it was taken at.
    #: The action passes it as ``as_of``: it reaches only jobs this count saw, unchanged since,
    #: so it never exceeds what was confirmed, whatever other processes commit meanwhile.
    counted: BulkCount | None = None
    #: Stop: the claim (``locked_at``) of each of ``job_ids`` as the operator saw it, so the
    #: request reaches that attempt only, never a later run of the job.
    claimed_at_ms: tuple[int | None, ...] | None = None
    #: Delete: how many of the targets are running now (known for explicit targets and for
    #: a view of processing jobs): deleting one does not stop its handler.
    running: int = 0

    @property
    def is_bulk(self) -> bool:
        return self.query is not None

    @property
    def statuses(self) -> tuple[JobStatus, ...]:
        if self.query is not None and self.query.status is not None:
            return tuple(s for s in ELIGIBLE[self.kind] if s is self.query.status)
        return ELIGIBLE[self.kind]

    @property
    def reaches_every_job(self) -> bool:
        """A bulk plan whose view narrows nothing (no filter, or a name glob such as ``*`` that
        every name matches: ``selector_rules.selects_every_job``). The console acts on every
        job only with a confirmation that says so, as the command line only with ``--all``."""
        return self.query is not None and selects_every_job(self.query.list_filter())

    @property
    def needs_typed_confirmation(self) -> bool:
        """Deleting every job (a view that narrows nothing): type the count."""
        return self.kind is ActionKind.DELETE and self.reaches_every_job

    @property
    def question(self) -> str:
        verb = VERBS[self.kind][0]
        when = f" to {absolute_text(self.run_at)}" if self.run_at is not None else ""
        if self.query is not None:
            # The count first: a long view description may wrap, but the number is always seen.
            return f"{verb} {plural(self.count, 'job')}: {bulk_what(self.kind, self.query)}{when}?"
        return f"{verb} {self.subject}{when}?"

    @property
    def details(self) -> list[str]:
        lines = [(CONSEQUENCES_OF_ONE if self.count == 1 else CONSEQUENCES)[self.kind]]
        if self.skipped:
            reason = NOT_ELIGIBLE[self.kind].replace("were", "was" if self.skipped == 1 else "were", 1)
            lines.append(f"{plural(self.skipped, 'other marked job')} {reason} and will be left alone.")
        if self.kind is ActionKind.DELETE and self.running:
            # Deleting a running job printed the same words as deleting a finished one (review).
            them = "it" if self.running == 1 else "them"
            who = "It is" if self.count == 1 else f"{self.running:,} of them {_is_are(self.running)}"
            lines.append(
                f"{who} running: deleting does not stop the handler, and what it returns is lost "
                f"(c asks {them} to stop first)."
            )
        if self.kind is ActionKind.RETRY and self.is_bulk:
            lines.append("Bulk retries are spread over the next 30 seconds.")
        if self.needs_typed_confirmation:
            lines.append(f"No filter narrows this view: this is every job in the store. Type {self.count} to confirm.")
        elif self.reaches_every_job:
            lines.append(
                f"No filter narrows this view: this is every job in the store that is {statuses_for(self.kind)}."
            )
        return lines


def _is_are(count: int) -> str:
    return "is" if count == 1 else "are"


def absolute_text(moment: datetime) -> str:
    return absolute(int(moment.timestamp() * 1000))


def plan_for_jobs(kind: ActionKind, jobs: Sequence[Job], marked: bool) -> ActionPlan:
    """Explicit targets: the marked rows, or else the cursor row."""
    chosen = [job for job in jobs if eligible(kind, job.status)]
    skipped = len(jobs) - len(chosen)
    if not marked and len(jobs) == 1:
        job = jobs[0]
        subject = f"job {short_id(job.id)} ({clip_line(job.name, 300)})"  # a foreign row's name may be megabytes
    else:
        subject = plural(len(chosen), "marked job")
    claims = tuple(job.locked_at_ms for job in chosen) if kind is ActionKind.STOP else None
    running = sum(job.status is JobStatus.PROCESSING for job in chosen) if kind is ActionKind.DELETE else 0
    return ActionPlan(
        kind,
        tuple(job.id for job in chosen),
        skipped,
        None,
        len(chosen),
        subject,
        claimed_at_ms=claims,
        running=running,
    )


def bulk_subject(kind: ActionKind, query: JobQuery, count: int) -> str:
    return f"{bulk_what(kind, query)} ({plural(count, 'job')})"


def bulk_what(kind: ActionKind, query: JobQuery) -> str:
    """``every failed job named 'x' created 10:00..12:00 UTC``: which jobs a bulk plan reaches."""
    statuses = ELIGIBLE[kind] if query.status is None else (query.status,)
    which = "" if kind is ActionKind.DELETE and query.status is None else " or ".join(s.value for s in statuses) + " "
    named = ""
    if query.name:
        named = f" with a name matching {query.name!r}" if query.name_is_glob else f" named {query.name!r}"
    if query.search:
        named += f" matching {query.search!r}"
    if query.text:
        named += f" containing {query.text!r}"
    if query.data:
        named += f" where {describe_terms(query.data)}"
    if query.error_group:
        named += f" in error group {(query.group_label or query.error_group)!r}"
    when = "".join(f" {time_range.describe()}" for time_range in query.ranges)
    return f"every {which}job{named}{when}"


#: Said after "Nothing to …: no job matches": what the bulk keys can do with the jobs listed.
#: ``C`` on 335 failed jobs read as a bug beside the listed rows (issue 40): only pending jobs
#: cancel, and the operator meant to be rid of them.
INSTEAD = {
    ActionKind.CANCEL: " Only pending jobs cancel: D deletes the jobs listed, R retries the failed or cancelled ones.",
    ActionKind.RETRY: " Only failed or cancelled jobs retry: C cancels pending ones, D deletes the jobs listed.",
}


def instead(kind: ActionKind) -> str:
    """What can be done instead when a bulk ``kind`` reaches no job (``INSTEAD``), or ""."""
    return INSTEAD.get(kind, "")


def instead_keys(kind: ActionKind) -> str:
    """``instead`` without its first sentence, for a notice that said what ``kind`` applies to."""
    text = INSTEAD.get(kind, "")
    return " " + text.split(": ", 1)[1] if text else ""


def wall_clock_ms() -> int:
    """The instant stores stamp ``updatedAt`` with (not the console's display clock, which tests freeze)."""
    return time.time_ns() // 1_000_000


def bulk_filter(kind: ActionKind, query: JobQuery) -> JobListFilter | None:
    """The view's whole filter (name, text, every range, error group, …) for the statuses ``kind`` may touch.

    The engine's bulk calls take any ``JobListFilter`` and apply it as one filter
    (the listing's own WHERE / filter document), so every filter the bar offers works.
    """
    if query.status is not None:
        if not eligible(kind, query.status):
            return None
        statuses: list[JobStatus] | None = [query.status]
    else:
        statuses = None if kind is ActionKind.DELETE else list(ELIGIBLE[kind])
    return replace(query.list_filter(), status=statuses)


async def count_bulk(monque: Monque, kind: ActionKind, query: JobQuery, as_of: BulkCount | None = None) -> BulkCount:
    """How many jobs a bulk plan reaches (the view's filter, the eligible statuses), with the
    store position it was counted at; under ``as_of``, how many of those it still reaches."""
    list_filter = bulk_filter(kind, query)
    if list_filter is None:  # the view's status is none the action takes: the engine's guard answers 0
        assert query.status is not None
        list_filter = JobListFilter(status=[query.status])
    return await monque.count_bulk(kind.value, list_filter, as_of=as_of)


async def reached_before_failing(monque: Monque, plan: ActionPlan) -> str:
    """`` (at least 2,000 of the 20,000 confirmed jobs were deleted before it failed)``: a bulk
    action the store stopped part way (a full disk) keeps its committed chunks, and "Delete
    failed" alone hid that 2,000 jobs were gone (a resource-exhaustion probe). A recount under
    the plan's own bound, 2 s at most; ``""`` when it cannot tell."""
    if plan.query is None or plan.counted is None:
        return ""
    try:
        left = await asyncio.wait_for(count_bulk(monque, plan.kind, plan.query, plan.counted), 2.0)
    except (TimeoutError, MonqueError):
        return ""
    reached = plan.count - int(left)
    if reached <= 0:
        return ""
    return (
        f" (at least {reached:,} of the {plan.count:,} confirmed jobs were {VERBS[plan.kind][1].lower()} before it "
        "failed; the rest are as they were)"
    )


def count_bulk_in_steps(
    monque: Monque, kind: ActionKind, query: JobQuery, as_of: BulkCount | None = None, step: int | None = None
) -> AsyncIterator[CountProgress]:
    """``count_bulk`` read in steps (a "contains" view, ADR 0008): the last carries the BulkCount."""
    list_filter = bulk_filter(kind, query)
    if list_filter is None:
        assert query.status is not None
        list_filter = JobListFilter(status=[query.status])
    return monque.count_bulk_in_steps(kind.value, list_filter, as_of=as_of, step=step)


async def plan_bulk(monque: Monque, kind: ActionKind, query: JobQuery, counted: BulkCount | None = None) -> ActionPlan:
    """The plan to confirm; ``counted``: the count already taken (in steps), else counted here."""
    as_of_ms = wall_clock_ms()
    if counted is None:
        counted = await count_bulk(monque, kind, query)
    count = int(counted)
    running = count if kind is ActionKind.DELETE and query.status is JobStatus.PROCESSING else 0
    return ActionPlan(
        kind,
        None,
        0,
        query,
        count,
        bulk_subject(kind, query, count),
        as_of_ms=as_of_ms,
        counted=counted,
        running=running,
    )


async def recount(monque: Monque, plan: ActionPlan, counted: BulkCount | None = None) -> ActionPlan | None:
    """Just before acting: the plan again if more jobs match than were confirmed (ask again), else None.

    Under the count's own bound no more can match; a plan whose count was lowered (as by an
    older count) is the case this still catches. ``counted``: the recount already taken."""
    if plan.query is None or plan.counted is None:
        return None
    if counted is None:
        counted = await count_bulk(monque, plan.kind, plan.query, plan.counted)
    count = int(counted)
    if count <= plan.count:
        return None
    return replace(plan, count=count, subject=bulk_subject(plan.kind, plan.query, count))


class Outcome(NamedTuple):
    """What a plan did, in words, and how loudly to say it (``information`` or ``warning``)."""

    message: str
    severity: str = "information"
    #: A stop found this owner dead: the console offers its dead-owner release instead.
    release_owner: str | None = None


async def execute(monque: Monque, plan: ActionPlan) -> Outcome:
    """Run a plan; returns the sentence for the result notification."""
    past = VERBS[plan.kind][1]
    if plan.query is not None:
        list_filter = bulk_filter(plan.kind, plan.query)
        if list_filter is None:
            return Outcome(f"{past} 0 jobs")
        # One store operation on the whole filter, bounded to what was counted (never more than confirmed).
        if plan.kind is ActionKind.CANCEL:
            result = await monque.cancel_jobs(list_filter, as_of=plan.counted)
        elif plan.kind is ActionKind.RETRY:
            result = await monque.retry_jobs(list_filter, as_of=plan.counted)
        elif plan.kind is ActionKind.DELETE:
            result = await monque.delete_jobs(list_filter, as_of=plan.counted)
        elif plan.kind is ActionKind.STOP:
            result = await monque.stop_jobs(list_filter, as_of=plan.counted)
        else:
            raise ValueError(f"{plan.kind} has no bulk form")
        message = f"{past} {plural(result.count, 'job')}"
        if plan.kind is ActionKind.STOP and result.errors:
            message += f"; {len(result.errors):,} could not be: {result.errors[0]['error']}"
            return Outcome(message, "warning")
        if result.count != plan.count:
            # The count is the dialog's, taken when it opened: not "when you confirmed".
            message += f" ({plan.count:,} were counted when you asked; the others changed before it reached them)"
        return Outcome(message)
    if plan.kind is ActionKind.STOP:
        return await _stop_each(monque, plan)
    done = gone = refused = 0
    unreadable: list[InvalidJobDocumentError] = []
    for job_id in plan.job_ids or ():
        try:
            if plan.kind is ActionKind.CANCEL:
                ok = await monque.cancel_job(job_id) is not None
            elif plan.kind is ActionKind.RETRY:
                ok = await monque.retry_job(job_id) is not None
            elif plan.kind is ActionKind.RESCHEDULE:
                assert plan.run_at is not None
                ok = await monque.reschedule_job(job_id, plan.run_at) is not None
            else:
                ok = await monque.delete_job(job_id)
        except JobStateError:
            refused += 1
            continue
        except InvalidJobDocumentError as error:
            # A row damaged by hand: cancel, retry and reschedule read the job and cannot. The
            # others of the selection still get the action, and the sentence says what to do.
            unreadable.append(error)
            continue
        if ok:
            done += 1
        else:
            gone += 1
    message = result_sentence(plan.kind, done, plan.skipped + refused, gone)
    if unreadable:
        if done == 0 and plan.skipped + refused + gone == 0:
            return Outcome(unreadable_sentence(plan.kind, unreadable, alone=True), "warning")
        return Outcome(f"{message}; {unreadable_sentence(plan.kind, unreadable, alone=False)}", "warning")
    return Outcome(message)


async def _stop_each(monque: Monque, plan: ActionPlan) -> Outcome:
    """Stop explicit running jobs, each at the attempt the operator saw; say what could not be."""
    done = 0
    refusals: list[StopRefusedError] = []
    claims = plan.claimed_at_ms or ()
    for index, job_id in enumerate(plan.job_ids or ()):
        claimed = claims[index] if index < len(claims) else None
        try:
            job = await monque.cancel_job(
                job_id, running=True, claimed_at=None if claimed is None else ms_to_datetime(claimed)
            )
        except StopRefusedError as error:
            refusals.append(error)
            continue
        if job is not None:
            done += 1
    message = f"Asked {plural(done, 'job')} to stop; each ends cancelled once its owner cancels the handler"
    if not refusals:
        return Outcome(message)
    first = refusals[0]
    dead = next((error.owner for error in refusals if error.reason == "dead_owner"), None)
    if done == 0 and len(refusals) == 1:
        return Outcome(str(first), "warning", release_owner=dead)
    return Outcome(f"{message}; {len(refusals):,} could not be: {first}", "warning", release_owner=dead)


def unreadable_sentence(kind: ActionKind, errors: list[InvalidJobDocumentError], alone: bool) -> str:
    """Why damaged rows were left alone and what works: ``d`` deletes them, or repair them by hand.

    ``alone``: the whole message (starts with a capital), else a clause after a ``;``.
    """
    verb = kind.value
    if len(errors) == 1:
        error = errors[0]
        which = f"job {short_id(error.job_id)}" if error.job_id else "1 job"
        return (
            f"{'Cannot' if alone else 'could not'} {verb} {which}: its stored row is damaged ({error.reason}); "
            f"{verb} needs a readable job, only delete works on it (d), or repair the row by hand"
        )
    return (
        f"{'Cannot' if alone else 'could not'} {verb} {len(errors):,} jobs: their stored rows are damaged "
        f"({errors[0].reason}, …); {verb} needs readable jobs, only delete works on them (d), or repair the rows "
        "by hand"
    )


def result_sentence(kind: ActionKind, done: int, left_alone: int, gone: int) -> str:
    parts = [f"{VERBS[kind][1]} {plural(done, 'job')}"]
    if left_alone:
        were = "was" if left_alone == 1 else "were"
        reason = NOT_ELIGIBLE[kind].replace("were", were, 1)
        parts.append(f"{left_alone:,} {reason} and {'was' if left_alone == 1 else 'were'} left alone")
    if gone:
        parts.append(f"{gone:,} no longer existed")
    return "; ".join(parts)
