"""Every command that takes a filter speaks the console filter bar's language (issue 28).

``export --search`` meant id or key (not contains), ``--name 'ops.*'`` exported 0 jobs in
silence, ``--created-from -2h`` failed with "expected one argument", and nothing exported an
error group or a contains view. ``cancel``, ``retry`` and ``delete`` are new: they count,
print the count, act only with ``--yes``, and never reach more jobs than counted, even with
a producer enqueuing into the same store meanwhile. Real subprocesses on real SQLite files.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from test_cli_damaged_store import Producer
from test_cli_fleet import cli

from monque_engine import ErrorGroup, JobStatus, Monque
from monque_tui.demo.seed import seed_id, seed_store

SEEDED = 16


def _seeded(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'seeded.db'}"
    asyncio.run(seed_store(url))
    return url


def _exported(url: str, *flags: str) -> list[dict[str, object]]:
    done = cli("export", *flags, "--url", url)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


async def _jobs(url: str) -> dict[str, tuple[str, str]]:
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        return {job.id: (job.name, job.status.value) for job in await monque.get_jobs(limit=1000)}
    finally:
        await monque.close()


async def _count_jobs(url: str) -> int:
    monque = Monque(url, recover_stale_jobs=False)
    await monque.initialize()
    try:
        return await monque.count_jobs()
    finally:
        await monque.close()


def test_export_takes_globs_ids_contains_groups_and_ranges(tmp_path: Path) -> None:
    url = _seeded(tmp_path)
    names = {job["name"] for job in _exported(url, "--name", "se*")}
    assert names == {"send-email"}
    everything = _exported(url, "--name", "*")
    assert len(everything) == SEEDED
    shown = seed_id(12)[-8:]
    assert [job["_id"] for job in _exported(url, "--id", shown[2:])] == [seed_id(12)]  # 6 of the 8 shown
    assert {job["_id"] for job in _exported(url, "--contains", "timed out")} == {seed_id(12), seed_id(13)}
    assert [job["_id"] for job in _exported(url, "--error-group", "webhook ConnectTimeout")] == [seed_id(12)]
    # The seed's instants are fixed in the past: relative ranges from now hold none, or all.
    assert _exported(url, "--created-from", "-2h") == []  # a dashed value is a value, as in the bar
    assert len(_exported(url, "--created", "..now")) == SEEDED
    assert _exported(url, "--next-run", "now..+1h") == []
    assert len(_exported(url, "--when", "created ..now  updated 2026-01-15", "--status", "failed")) == 3
    glob = cli("export", "--name", "ops.*", "--url", url)  # no such name: said, not silent
    assert glob.returncode == 0 and "matches 0 job name(s)" in glob.stderr and glob.stdout == ""


def test_a_bad_filter_is_one_line_and_exit_2(tmp_path: Path) -> None:
    url = _seeded(tmp_path)
    for flags, said in (
        (("--created", "yesterday.."), "cannot read 'yesterday'"),
        (("--created", "-2h..", "--when", "created today"), "given twice"),
        (("--error-group", "no such group anywhere"), "no error group matches"),
    ):
        done = cli("delete", *flags, "--yes", "--url", url)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    refused = cli("delete", "--yes", "--url", url)  # no filter: every job would go
    assert refused.returncode == 2 and "--all" in refused.stderr
    assert len(asyncio.run(_jobs(url))) == SEEDED


def test_bulk_commands_count_first_and_act_only_with_yes(tmp_path: Path) -> None:
    url = _seeded(tmp_path)
    before = asyncio.run(_jobs(url))
    counted = cli("retry", "--error-group", "ConnectTimeout", "--url", url)
    assert (counted.returncode, counted.stdout.strip()) == (0, "1")
    assert "nothing changed: add --yes" in counted.stderr
    assert asyncio.run(_jobs(url)) == before
    done = cli("retry", "--error-group", "ConnectTimeout", "--yes", "--url", url)
    assert (done.returncode, done.stdout.strip()) == (0, "1") and "retried 1 of 1" in done.stderr
    assert asyncio.run(_jobs(url))[seed_id(12)][1] == JobStatus.PENDING.value
    cancelled = cli("cancel", "--name", "s*", "--yes", "--url", url)  # pending send-email and sync-crm
    pending = [i for i, (name, status) in before.items() if name.startswith("s") and status == "pending"]
    assert cancelled.stdout.strip() == str(len(pending)), cancelled.stderr
    # (The retry cleared seed 12's failure: only seed 13 still has "timed out" in its error.)
    deleted = cli("delete", "--contains", "timed out", "--yes", "--url", url)
    assert deleted.stdout.strip() == "1", deleted.stderr
    assert seed_id(13) not in asyncio.run(_jobs(url))


def test_delete_never_reaches_more_than_it_counted_under_a_concurrent_producer(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'busy.db'}"
    producer = Producer(url)
    produced = [producer.burst()["ok"]]
    stop = threading.Event()

    def produce() -> None:
        while not stop.is_set():
            produced.append(producer.burst()["ok"])

    feeder = threading.Thread(target=produce, daemon=True)
    feeder.start()
    try:
        done = cli("delete", "--name", "produced", "--yes", "--url", url)
    finally:
        stop.set()
        feeder.join(timeout=30)
        producer.close()
    assert done.returncode == 0, done.stderr
    line = done.stderr.strip()
    deleted, counted = (int(word.replace(",", "")) for word in line.split()[1:4:2])  # "deleted X of Y counted"
    assert line.startswith("deleted ") and deleted <= counted and deleted > 0, line
    left = asyncio.run(_count_jobs(url))
    assert left + deleted == sum(produced)  # every job is either deleted or still there


def test_error_group_lines_name_a_real_message_beside_the_template(tmp_path: Path) -> None:
    """``--error-group`` named its group by the template alone (``KeyError: '<str>'``), the
    words the console no longer shows; a real message now comes first, the template beside it,
    and words from the real message find the group."""
    from monque_tui.demo.seed import SeedJob

    url = f"sqlite:///{tmp_path / 'keys.db'}"
    bad = [
        SeedJob(
            400 + n, "invoice.render", JobStatus.FAILED, 5, fail_count=1, fail_reason=f"'{key}'", error_type="KeyError"
        )
        for n, key in enumerate(("customer_id", "tenant"))
    ]
    asyncio.run(seed_store(url, bad))
    (group,) = asyncio.run(_groups(url))
    sample = group.sample_message  # one member's message, whichever the store picks
    assert group.pattern == "'<str>'" and sample in ("'customer_id'", "'tenant'")
    counted = cli("delete", "--error-group", sample.strip("'"), "--url", url)  # the words the console shows
    assert (counted.returncode, counted.stdout.strip()) == (0, "2"), counted.stderr
    assert f"invoice.render KeyError: {sample} (pattern: '<str>')" in counted.stderr, counted.stderr
    assert len(asyncio.run(_jobs(url))) == 2  # counted, nothing deleted


async def _groups(url: str) -> list[ErrorGroup]:
    monque = Monque(url)
    await monque.initialize()
    try:
        return await monque.error_groups()
    finally:
        await monque.close()
