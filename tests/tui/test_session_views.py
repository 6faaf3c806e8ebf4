"""What a view shows and counts, on the console's session core alone (no Textual, no Pilot).

Each tab, filter and error group is a ``JobQuery``; the session pages it from a seeded SQLite
file and counts it beside the tabs. Keys and the filter bar that build these queries are
the Pilot tests' business (test_filter_*.py, test_every_key.py).
"""

from __future__ import annotations

from monque_engine import JobStatus
from monque_tui.console.query import JobQuery
from monque_tui.console.session.errors import ErrorGroupsModel, group_query
from monque_tui.console.session.events import StatsChanged
from monque_tui.demo.seed import SEED_JOBS, seed_id

from .conftest import console_session

S_NAMES = {"send-email", "sync-crm"}
WEBHOOK_FAILED = seed_id(12)  # webhook, httpx.ConnectTimeout, failed
WEBHOOK_RETRYING = seed_id(13)  # webhook, httpx.ReadTimeout, pending with 2 failures


def _ids(session: object) -> list[str]:
    return [job.id for job in session.window.rows]  # type: ignore[attr-defined]


async def test_the_first_page_is_the_store_newest_first_and_counted(seeded_url: str) -> None:
    async with console_session(seeded_url) as (session, _):
        assert await session.load_top()
        expected = sorted(SEED_JOBS, key=lambda j: (j.age_min, -j.index))
        assert _ids(session) == [job.id for job in expected]
        await session.refresh_stats()
        assert session.stats is not None and session.stats.total == len(SEED_JOBS)
        assert session.matching is None  # the whole store: the tabs say it, no "N matching"


async def test_contains_text_counts_each_status_of_the_view(seeded_url: str) -> None:
    """The tabs counted every job of the store beside a "contains" view (issue 28)."""
    async with console_session(seeded_url) as (session, events):
        query = session.with_filter(None, None, (), text="timed out")
        assert session.set_query(query)
        await session.load_top()
        assert set(_ids(session)) == {seed_id(12), seed_id(13)}
        await session.refresh_stats()
        stats = session.stats
        assert stats is not None and stats.total == 2 and session.matching == 2
        # seed 12 failed, seed 13 pending (retrying): the tabs say so, not the store's totals.
        assert (stats.failed, stats.pending, stats.completed, stats.processing) == (1, 1, 0, 0)
        assert any(isinstance(e, StatsChanged) and e.query == query and e.matching == 2 for e in events)


async def test_an_id_search_counts_its_one_job(seeded_url: str) -> None:
    async with console_session(seeded_url) as (session, _):
        session.set_query(session.with_filter(None, seed_id(2)[-8:], ()))
        await session.load_top()
        assert _ids(session) == [seed_id(2)]
        await session.refresh_stats()
        assert session.stats is not None and (session.stats.total, session.stats.failed) == (1, 1)


async def test_a_name_glob_shows_and_counts_every_matching_name(seeded_url: str) -> None:
    async with console_session(seeded_url) as (session, _):
        session.set_query(JobQuery(name="s*"))
        await session.load_top()
        assert set(_ids(session)) == {job.id for job in SEED_JOBS if job.name in S_NAMES}
        await session.refresh_stats()  # reads the names the glob matches, then counts each
        assert session.matched_names() == sorted(S_NAMES)
        assert session.stats is not None and session.stats.total == sum(job.name in S_NAMES for job in SEED_JOBS)
        session.set_query(JobQuery(name="send"))  # without a wildcard the name is exact
        await session.load_top()
        assert _ids(session) == [] and session.matched_names() is None


async def test_an_error_group_view_shows_and_counts_only_its_members(seeded_url: str) -> None:
    """Enter on the errors view shows ``group_query``: the group's failed and retrying jobs,
    and the tabs beside it count the group, not the store."""
    async with console_session(seeded_url) as (session, _):
        model = ErrorGroupsModel()
        assert await model.fetch(session.monque)
        by_type = {group.error_type: group for group in model.groups}
        assert {(g.name, g.error_type) for g in model.groups} == {
            ("send-email", "aiosmtplib.SMTPServerDisconnected"),
            ("resize-image", "PIL.UnidentifiedImageError"),
            ("webhook", "httpx.ConnectTimeout"),
            ("webhook", "httpx.ReadTimeout"),
        }
        for error_type, member, status in (
            ("httpx.ConnectTimeout", WEBHOOK_FAILED, JobStatus.FAILED),
            ("httpx.ReadTimeout", WEBHOOK_RETRYING, JobStatus.PENDING),
        ):
            session.set_query(group_query(session.query, by_type[error_type]))
            await session.load_top()
            assert _ids(session) == [member]
            await session.refresh_stats()
            assert session.matching == 1
            assert session.stats is not None and session.stats.count(status) == 1 and session.stats.total == 1
