"""``c`` on a running job whose owner is dead (issue 37): the console offers the dead-owner
release instead of a stop nobody would hear. On the session core alone (no Textual): the plan
for ``c`` on a processing row becomes a stop; running it writes nothing and leaves the
dead owner in ``offer_release``, which the app turns into the release dialog
(``MonqueConsole.release_owner``)."""

from __future__ import annotations

from pathlib import Path

from monque_engine import Monque
from monque_engine.job import InstanceRecord, JobStatus
from monque_engine.timeutil import now_ms
from monque_tui.console.actions import ActionKind

from .conftest import console_session, notices


async def test_c_on_a_job_of_a_dead_owner_offers_its_release_and_writes_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    async with Monque(url, recover_stale_jobs=False) as monque:
        beat = now_ms() - 600_000  # ten minutes without a beat at a 1 s interval
        await monque.store.upsert_instance(InstanceRecord("w-dead", "h", 1, "v", beat, 1_000, {}, 1, 0, 0, beat))
        await monque.enqueue("task", {})
        [job] = await monque.store.claim("task", "w-dead", now_ms(), 1, 30_000)
    async with console_session(url) as (session, events):
        plan = session.plan_for_targets(ActionKind.CANCEL, jobs=[job])
        assert plan is not None and plan.kind is ActionKind.STOP and plan.job_ids == (job.id,)
        await session.run_plan(plan)
        assert session.offer_release == "w-dead"
        assert any("w-dead" in message for message in notices(events)), notices(events)
    async with Monque(url, recover_stale_jobs=False) as monque:
        after = await monque.get_job(job.id)
    assert after is not None and after.status is JobStatus.PROCESSING and after.stop_requested_at_ms is None
