"""Upstream parity: the options table and the statistics cache (UPSTREAM.md "Options").

Each default is upstream's, in seconds where upstream speaks ms (README "Options"). Two
documented differences are asserted as ours: ``stale_recovery_interval`` (upstream
recovers only in ``initialize()``; we also recover periodically, ADR 0004) and the default
``scheduler_instance_id``, which follows upstream's own advice (hostname and pid) instead
of a bare random UUID, and is still unique per instance.

The statistics cache is upstream's: ``stats_cache_ttl`` seconds (0 disables it, covered in
contract/reads/test_stats), an LRU of 100 names, cleared on stop (contract/reads/test_stats).
"""

from __future__ import annotations

import os
import socket

import pytest

from monque_engine import InvalidOptionError, JobRetention, Monque, MonqueOptions


def test_every_default_is_upstreams():
    options = MonqueOptions()
    assert {
        "collection_name": options.collection_name,
        "poll_interval": options.poll_interval,
        "safety_poll_interval": options.safety_poll_interval,
        "max_retries": options.max_retries,
        "base_retry_interval": options.base_retry_interval,
        "max_backoff_delay": options.max_backoff_delay,
        "shutdown_timeout": options.shutdown_timeout,
        "worker_concurrency": options.worker_concurrency,
        "instance_concurrency": options.instance_concurrency,
        "lock_timeout": options.lock_timeout,
        "heartbeat_interval": options.heartbeat_interval,
        "recover_stale_jobs": options.recover_stale_jobs,
        "job_retention": options.job_retention,
        "skip_index_creation": options.skip_index_creation,
        "max_payload_size": options.max_payload_size,
        "stats_cache_ttl": options.stats_cache_ttl,
    } == {
        "collection_name": "monque_jobs",
        "poll_interval": 1.0,  # 1000 ms
        "safety_poll_interval": 30.0,  # 30000 ms
        "max_retries": 10,
        "base_retry_interval": 1.0,  # 1000 ms
        "max_backoff_delay": 86_400.0,  # 24 h
        "shutdown_timeout": 30.0,  # 30000 ms
        "worker_concurrency": 5,
        "instance_concurrency": None,  # unlimited
        "lock_timeout": 1_800.0,  # 30 min
        "heartbeat_interval": 30.0,  # 30000 ms
        "recover_stale_jobs": True,
        "job_retention": None,
        "skip_index_creation": False,
        "max_payload_size": None,
        "stats_cache_ttl": 5.0,  # statsCacheTtlMs 5000
    }
    assert JobRetention(completed=60).interval == 3_600.0  # jobRetention.interval: 1 h
    # Ours: periodic stale recovery, every lock_timeout / 4, at most a minute.
    assert options.effective_stale_recovery_interval == 60.0


def test_the_default_instance_id_is_unique_and_follows_upstreams_advice(tmp_path):
    first, second = (Monque(f"sqlite:///{tmp_path}/jobs.db") for _ in range(2))
    assert first.instance_id != second.instance_id
    assert first.instance_id.startswith(f"{socket.gethostname()}:{os.getpid()}:")
    assert Monque(f"sqlite:///{tmp_path}/jobs.db", scheduler_instance_id="worker-a").instance_id == "worker-a"


async def test_the_stats_cache_keeps_the_100_names_used_last(monque, raw):
    """statsCacheTtlMs: 'LRU of 100 names'. With a long TTL, a name read again within its
    TTL is served from the cache (a change since is not seen); once 100 other names were
    read after it, it has been evicted and is read fresh."""
    m = await monque(stats_cache_ttl=3_600)
    first = await m.enqueue("name-0", {})
    assert (await m.get_queue_stats("name-0")).pending == 1
    await m.enqueue("name-0", {})
    assert (await m.get_queue_stats("name-0")).pending == 1  # cached
    for index in range(1, 100):
        await m.get_queue_stats(f"name-{index}")
    assert (await m.get_queue_stats("name-0")).pending == 1  # 100 names: still cached (and now used last)
    for index in range(100, 200):
        await m.get_queue_stats(f"name-{index}")
    await raw(m).set(first.id, status="completed")
    stats = await m.get_queue_stats("name-0")  # evicted by the 100 names read since: fresh
    assert (stats.pending, stats.completed) == (1, 1)


def test_upstreams_deprecated_concurrency_names_are_read_as_the_new_ones(tmp_path):
    """Upstream still reads ``defaultConcurrency`` as ``workerConcurrency`` and
    ``maxConcurrency`` as ``instanceConcurrency`` (its own locking tests use the old name),
    the new name winning when both are given."""
    url = f"sqlite:///{tmp_path}/jobs.db"
    m = Monque(url, default_concurrency=2, max_concurrency=3)
    assert (m.options.worker_concurrency, m.options.instance_concurrency) == (2, 3)
    m = Monque(url, default_concurrency=2, worker_concurrency=4, max_concurrency=3, instance_concurrency=6)
    assert (m.options.worker_concurrency, m.options.instance_concurrency) == (4, 6)
    with pytest.raises(InvalidOptionError, match="worker_concurrency"):
        Monque(url, default_concurrency=-1)  # validated as the option it stands for
