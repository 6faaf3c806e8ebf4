"""Prometheus metrics for a ``Monque``: a collector to register, or an HTTP endpoint to scrape.

    collector = monque.metrics()                      # the same MonqueCollector every call
    prometheus_client.REGISTRY.register(collector)    # an application that serves metrics already
    server = collector.serve(9464)                    # or its own endpoint, on 127.0.0.1

``prometheus-client`` is an optional dependency (``pip install 'monque-tui[metrics]'``). Only this
module imports it, and nothing imports this module but ``Monque.metrics()`` (lazily): the engine
imports, and runs, without it. This module does not import ``Monque`` back: it reads a
``MetricsSource``, of whose store only the Reads port (ADR 0018).

Two kinds of series, with the job name as the only per-job label (never a job id), and
bounded: a name gets series of its own only when it is in the collector's *named set*, the
names given (``names=``) or else the first ``max_names`` (100) this process sees; every other
name is summed under ``name="other"`` (``OTHER``). The set only grows, and once full never
changes, so a name never moves in or out of ``other`` and every counter stays monotonic.
5,000 names then cost 101 series per metric, not 5,000.

* Counters and the duration histogram count what *this process's* workers did, from the
  engine's events (``job:complete``, ``job:fail``, ``stale:recovered``): a dict increment per
  job on the event loop, nothing written anywhere. Sum them across processes in PromQL.
* Gauges describe the *store*, whoever did the work: read on scrape, at most once per
  ``cache_seconds``, from what the store keeps rather than from the jobs. Counts per name and
  status come from the SQLite store's kept counts (O(names)); due and scheduled from
  ``Reads.pending_split``, which counts each side only up to ``SPLIT_CAP`` index entries
  per name (see ``_split``); latency from the earliest pending run time (one index seek).
"""

from __future__ import annotations

import asyncio
import bisect
import concurrent.futures
import math
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, get_args

from .events import CountEvent, EventName, JobCompleteEvent, JobFailEvent, Listener, Subscribe
from .scheduler.resilient_watch import FeedState
from .timeutil import now_ms

INSTALL_HINT = "Prometheus metrics need prometheus-client: pip install 'monque-tui[metrics]'"


class MetricsUnavailableError(ImportError):
    """``prometheus-client`` is not installed."""


try:
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
    from prometheus_client.platform_collector import PlatformCollector
    from prometheus_client.process_collector import ProcessCollector
    from prometheus_client.registry import Collector
except ImportError as error:
    raise MetricsUnavailableError(f"{INSTALL_HINT} ({error})") from None

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from .fleet_records import InstanceInfo
    from .store import ports
    from .store.values import PendingSplit

#: Upper bounds (seconds) of the duration histogram: from a no-op job to an hour-long one.
DURATION_BUCKETS: tuple[float, ...] = (
    0.001,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    300.0,
    900.0,
    3600.0,
)
#: Due and scheduled are counted up to this many index entries per name and side; the split
#: is exact whenever one side of a name is under it (see ``_split``).
SPLIT_CAP = 10_000
#: The ``le`` label of each bucket, written once.
_LE = {bound: "+Inf" if math.isinf(bound) else repr(bound) for bound in (*DURATION_BUCKETS, math.inf)}
FEED_STATES: tuple[str, ...] = get_args(FeedState)
STATUSES = ("pending", "processing", "completed", "failed", "cancelled")
#: The label every name outside the named set is summed under (a job named "other" too).
OTHER = "other"
#: How many names, first seen first, get series of their own when no names are given.
DEFAULT_MAX_NAMES = 100


class NamedSet:
    """Which job names get series of their own; the rest are ``OTHER``. Sticky for its life.

    With ``names`` the set is exactly those. Otherwise the first ``max_names`` names seen are
    admitted and, once it is full, none ever again: a name's first answer is its answer for
    good, which keeps every counter (its own, or ``other``'s sum) monotonic. Memory is the set
    (at most ``max_names``), never every name seen. Called on the Monque's event loop only.
    """

    def __init__(self, names: Iterable[str] | None = None, max_names: int = DEFAULT_MAX_NAMES) -> None:
        if max_names < 0:
            raise ValueError(f"max_names must be 0 or more, not {max_names}")
        self.fixed = names is not None
        self._admitted: set[str] = {name for name in names or () if name != OTHER}
        self.max_names = len(self._admitted) if self.fixed else max_names

    def label(self, name: str) -> str:
        """The ``name`` label of ``name``'s series: itself, or ``OTHER``."""
        if name in self._admitted:
            return name
        if self.fixed or name == OTHER or len(self._admitted) >= self.max_names:
            return OTHER
        self._admitted.add(name)
        return name

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._admitted)


@dataclass(slots=True)
class _Outcomes:
    """One job name's outcomes in this process (written on the loop, read by scrapes)."""

    processed: int = 0
    failed: int = 0
    retries: int = 0
    duration_sum: float = 0.0
    #: Completed runs per duration bucket, not cumulative; the last one is +Inf.
    buckets: list[int] = field(default_factory=lambda: [0] * (len(DURATION_BUCKETS) + 1))


class MetricsSource(Protocol):
    """What the collector reads of a ``Monque``: its events, its fleet view, its feed state,
    and of its store the Reads port only. A Protocol rather than ``Monque`` itself, so that
    ``Monque.metrics()`` importing this module is the only import between the two."""

    @property
    def store(self) -> ports.Reads: ...

    @property
    def on(self) -> Subscribe: ...

    def off(self, event: EventName, listener: Listener | None = None) -> None: ...

    async def paused(self) -> Mapping[str, object]: ...

    async def instances(self) -> Sequence[InstanceInfo]: ...

    @property
    def feed_state(self) -> FeedState: ...

    @property
    def running_with_progress(self) -> int:
        """Jobs running in this process whose handler reported progress (issue 37)."""
        ...


@dataclass(frozen=True, slots=True)
class _Gauges:
    """One read of the store, shared by the scrapes of the next ``cache_seconds``."""

    counts: dict[str, dict[str, int]]
    due: dict[str, int]
    scheduled: dict[str, int]
    latency: dict[str, float]
    paused: set[str] | None
    consumers: dict[str, int] | None
    instances: tuple[int, int] | None  # alive, dead


class MonqueCollector(Collector):
    """The Prometheus collector of one ``Monque`` (``monque.metrics()`` builds it once).

    Register it with any ``prometheus_client`` registry, or ``serve()`` it. ``collect()`` may
    be called from any thread: the store is read on the Monque's event loop (the one the
    collector was built on, or the one a first ``await refresh()`` ran on). A scrape made *on*
    that loop (an async web framework calling ``generate_latest``) cannot wait for it: it gets
    the last reading and starts the next; ``await collector.refresh()`` first to be current.
    """

    def __init__(
        self,
        monque: MetricsSource,
        *,
        cache_seconds: float = 1.0,
        read_timeout: float = 10.0,
        names: Iterable[str] | None = None,
        max_names: int = DEFAULT_MAX_NAMES,
    ) -> None:
        self._monque = monque
        self._reads: ports.Reads = monque.store
        self.cache_seconds = cache_seconds
        self.read_timeout = read_timeout
        #: Which names get series of their own (see ``NamedSet``); the rest are ``OTHER``.
        self.named = NamedSet(names, max_names)
        self._outcomes: dict[str, _Outcomes] = {}
        self._stale_recovered = 0
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        self._gauges: _Gauges | None = None
        self._read_ok = False
        self._read_at = -math.inf
        self._lock = threading.Lock()
        self._refreshing: asyncio.Task[None] | None = None
        self._listeners: list[tuple[Any, Any]] = [
            ("job:complete", self._on_complete),
            ("job:fail", self._on_fail),
            ("stale:recovered", self._on_stale),
        ]
        for event, listener in self._listeners:
            monque.on(event, listener)

    def detach(self) -> None:
        """Stop counting this Monque's events (the counters keep their values)."""
        for event, listener in self._listeners:
            self._monque.off(event, listener)

    # -- counters (on the event loop, once per job: keep them small) ----------------------------
    def _series(self, name: str) -> _Outcomes:
        series = self._outcomes.get(name)
        if series is None:
            series = self._outcomes[name] = _Outcomes()
        return series

    def _on_complete(self, event: JobCompleteEvent) -> None:
        label = self.named.label(event.job.name)
        series = self._outcomes.get(label) or self._series(label)
        series.processed += 1
        seconds = event.duration / 1000
        series.duration_sum += seconds
        series.buckets[bisect.bisect_left(DURATION_BUCKETS, seconds)] += 1

    def _on_fail(self, event: JobFailEvent) -> None:
        label = self.named.label(event.job.name)
        series = self._outcomes.get(label) or self._series(label)
        series.processed += 1
        series.failed += 1
        if event.will_retry:
            series.retries += 1

    def _on_stale(self, event: CountEvent) -> None:
        self._stale_recovered += event.count

    # -- gauges (read from the store, cached) --------------------------------------------------
    async def refresh(self) -> None:
        """Read the store's gauges now, on the running loop (which becomes the collector's)."""
        self._loop = asyncio.get_running_loop()
        try:
            gauges = await self._read()
        except Exception:  # noqa: BLE001 - a scrape reports the store down (monque_store_up 0), never raises
            self._read_ok = False
        else:
            self._gauges, self._read_ok = gauges, True
        self._read_at = time.monotonic()

    async def _read(self) -> _Gauges:
        monque = self._monque
        store = self._reads
        stats = await store.stats_by_name()
        counts = {name: {status: s.count(status) for status in STATUSES} for name, s in stats.items()}
        pending = {name: c["pending"] for name, c in counts.items() if c["pending"]}
        now = now_ms()
        splits = await store.pending_split(now, list(pending), SPLIT_CAP) if pending else []
        due: dict[str, int] = dict.fromkeys(counts, 0)
        scheduled: dict[str, int] = dict.fromkeys(counts, 0)
        latency: dict[str, float] = dict.fromkeys(counts, 0.0)
        for split in splits:
            due[split.name], scheduled[split.name] = _split(split, pending[split.name], now)
            if split.earliest_ms is not None and split.earliest_ms <= now:
                latency[split.name] = (now - split.earliest_ms) / 1000
        paused: set[str] | None
        try:
            paused = set(await monque.paused())
        except NotImplementedError:
            paused = None
        consumers: dict[str, int] | None
        instances: tuple[int, int] | None
        try:
            known = await monque.instances()
        except NotImplementedError:
            consumers = instances = None
        else:
            alive = [i for i in known if i.alive]
            instances = (len(alive), len(known) - len(alive))
            consumers = {}
            for info in alive:
                for name in info.workers:
                    consumers[name] = consumers.get(name, 0) + 1
        return _bounded(_Gauges(counts, due, scheduled, latency, paused, consumers, instances), self.named)

    def _current_gauges(self) -> _Gauges | None:
        """The cached reading, refreshed first when older than ``cache_seconds``."""
        if time.monotonic() - self._read_at < self.cache_seconds:
            return self._gauges if self._read_ok else None
        loop = self._loop
        if loop is None or loop.is_closed():
            self._read_ok = False
            return None
        try:
            on_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            # Blocking here would block the loop the read needs: answer from the last reading.
            if self._refreshing is None or self._refreshing.done():
                self._refreshing = loop.create_task(self.refresh())
            return self._gauges if self._read_ok else None
        with self._lock:  # concurrent scrapes share one read
            if time.monotonic() - self._read_at >= self.cache_seconds:
                try:
                    asyncio.run_coroutine_threadsafe(self.refresh(), loop).result(self.read_timeout)
                except (concurrent.futures.TimeoutError, RuntimeError):  # a stopped or blocked loop
                    self._read_ok = False
                    self._read_at = time.monotonic()
        return self._gauges if self._read_ok else None

    # -- the Collector protocol -----------------------------------------------------------------
    def describe(self) -> Iterable[Metric]:
        """The families without samples, so registering never reads the store."""
        return list(self._families(None, with_samples=False))

    def collect(self) -> Iterable[Metric]:
        return list(self._families(self._current_gauges(), with_samples=True))

    def _families(self, gauges: _Gauges | None, *, with_samples: bool) -> Iterator[Metric]:
        counter, gauge, histogram = CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
        outcomes = dict(self._outcomes) if with_samples else {}  # a copy: the loop may add a name meanwhile
        processed = counter(
            "monque_jobs_processed", "Job runs this process finished (completed or failed).", labels=["name"]
        )
        failed = counter("monque_jobs_failed", "Job runs this process finished with a failure.", labels=["name"])
        retries = counter(
            "monque_job_retries", "Failed runs this process scheduled for another attempt.", labels=["name"]
        )
        duration = histogram(
            "monque_job_duration_seconds", "Handler run time of jobs this process completed.", labels=["name"]
        )
        for name, series in sorted(outcomes.items()):
            processed.add_metric([name], series.processed)
            failed.add_metric([name], series.failed)
            retries.add_metric([name], series.retries)
            cumulative, total = [], 0
            for bound, count in zip((*DURATION_BUCKETS, math.inf), series.buckets, strict=True):
                total += count
                cumulative.append((_LE[bound], total))
            duration.add_metric([name], cumulative, series.duration_sum)
        yield from (processed, failed, retries, duration)
        yield counter(
            "monque_stale_recovered_jobs",
            "Processing jobs this process returned to pending because their owner stopped beating.",
            value=self._stale_recovered if with_samples else None,
        )
        feed = gauge("monque_feed_state", "This process's change feed: 1 for its current state.", labels=["state"])
        if with_samples:
            current = self._monque.feed_state
            for state in FEED_STATES:
                feed.add_metric([state], 1.0 if state == current else 0.0)
        yield feed
        yield gauge(
            "monque_running_jobs_with_progress",
            "Jobs running in this process whose handler reported progress (one series: no per-job labels).",
            value=float(getattr(self._monque, "running_with_progress", 0)) if with_samples else None,
        )
        yield gauge(
            "monque_store_up",
            "1 when the last read of the store's gauges succeeded.",
            value=(1.0 if gauges is not None else 0.0) if with_samples else None,
        )
        jobs = gauge(
            "monque_jobs", "Jobs in the store by name and status (the store's kept counts).", labels=["name", "status"]
        )
        due = gauge("monque_jobs_due", "Pending jobs whose run time has come.", labels=["name"])
        scheduled = gauge("monque_jobs_scheduled", "Pending jobs whose run time is still ahead.", labels=["name"])
        latency = gauge(
            "monque_queue_latency_seconds", "Age of the oldest due job (0 when nothing is due).", labels=["name"]
        )
        paused = gauge("monque_queue_paused", "1 when claiming of the name is paused.", labels=["name"])
        consumers = gauge(
            "monque_queue_consumers", "Live registered instances with a worker for the name.", labels=["name"]
        )
        instances = gauge("monque_instances", "Scheduler instances the store knows of.", labels=["state"])
        if gauges is not None:
            for name, by_status in sorted(gauges.counts.items()):
                for status, count in by_status.items():
                    jobs.add_metric([name, status], count)
                due.add_metric([name], gauges.due[name])
                scheduled.add_metric([name], gauges.scheduled[name])
                latency.add_metric([name], gauges.latency[name])
            names = set(gauges.counts)
            if gauges.paused is not None:
                for name in sorted(names | gauges.paused):
                    paused.add_metric([name], 1.0 if name in gauges.paused else 0.0)
            if gauges.consumers is not None:
                for name in sorted(names | set(gauges.consumers)):
                    consumers.add_metric([name], gauges.consumers.get(name, 0))
            if gauges.instances is not None:
                instances.add_metric(["alive"], gauges.instances[0])
                instances.add_metric(["dead"], gauges.instances[1])
        yield from (jobs, due, scheduled, latency, paused, consumers, instances)

    # -- an endpoint of its own ------------------------------------------------------------------
    def serve(self, port: int, host: str = "127.0.0.1") -> MetricsServer:
        """Serve ``/metrics`` on ``host:port`` from a daemon thread (this collector plus the
        process's CPU and memory); ``port`` 0 picks a free one. Raises ``OSError`` when the
        address cannot be bound."""
        registry = CollectorRegistry(auto_describe=True)
        registry.register(self)
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        server, thread = start_http_server(port, host, registry)
        return MetricsServer(server, thread)


def _split(split: PendingSplit, pending: int, now: int) -> tuple[int, int]:
    """Due and scheduled of one name, from its exact pending count (the kept counts) and the
    capped counts: exact when either side is under the cap, since the other is the rest. Only
    a name with over ``SPLIT_CAP`` jobs on *both* sides is estimated, from where ``now`` falls
    between its earliest and latest run time (counting that exactly means walking the index)."""
    if split.scheduled < SPLIT_CAP:
        scheduled = min(split.scheduled, pending)
        return pending - scheduled, scheduled
    if split.due < SPLIT_CAP:
        due = min(split.due, pending)
        return due, pending - due
    first, last = split.earliest_ms, split.latest_ms
    share = 0.5 if first is None or last is None or last <= first else (now - first) / (last - first)
    due = min(max(round(pending * share), SPLIT_CAP), max(pending - SPLIT_CAP, SPLIT_CAP))
    return due, max(pending - due, 0)


def _bounded(gauges: _Gauges, named: NamedSet) -> _Gauges:
    """The store's per-name gauges with every name outside ``named`` folded into ``OTHER``.

    Counts, due and scheduled are summed; latency is the oldest among them. Paused and
    consumers answer the no-consumer alert's question for the group: ``other`` is paused only
    when every name in it is, and its consumers are the fewest of any unpaused name in it with
    due jobs (0 when one has none), so the alert fires for ``other`` exactly when it would for
    one of its names.
    """
    names = set(gauges.counts) | (gauges.paused or set()) | set(gauges.consumers or {})
    labels = {name: named.label(name) for name in sorted(names)}  # sorted: admission is reproducible
    others = [name for name, label in labels.items() if label == OTHER]
    if not others:
        return gauges
    counts = {name: c for name, c in gauges.counts.items() if labels[name] != OTHER}
    due = {name: v for name, v in gauges.due.items() if labels[name] != OTHER}
    scheduled = {name: v for name, v in gauges.scheduled.items() if labels[name] != OTHER}
    latency = {name: v for name, v in gauges.latency.items() if labels[name] != OTHER}
    in_store = [name for name in others if name in gauges.counts]
    if in_store:
        counts[OTHER] = {status: sum(gauges.counts[name][status] for name in in_store) for status in STATUSES}
        due[OTHER] = sum(gauges.due[name] for name in in_store)
        scheduled[OTHER] = sum(gauges.scheduled[name] for name in in_store)
        latency[OTHER] = max(gauges.latency[name] for name in in_store)
    was_paused = gauges.paused or set()
    paused: set[str] | None = None
    if gauges.paused is not None:
        paused = {name for name in was_paused if labels[name] != OTHER}
        if all(name in was_paused for name in others):
            paused.add(OTHER)
    consumers: dict[str, int] | None = None
    if gauges.consumers is not None:
        had = gauges.consumers
        consumers = {name: n for name, n in had.items() if labels[name] != OTHER}
        waiting = [name for name in in_store if gauges.due[name] > 0 and name not in was_paused]
        consumers[OTHER] = min((had.get(name, 0) for name in waiting or others), default=0)
    return _Gauges(counts, due, scheduled, latency, paused, consumers, gauges.instances)


class MetricsServer:
    """A running ``/metrics`` endpoint (``MonqueCollector.serve``)."""

    def __init__(self, server: WSGIServer, thread: threading.Thread) -> None:
        self._server = server
        self._thread = thread

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
