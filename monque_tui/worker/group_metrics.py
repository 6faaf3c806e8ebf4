"""One ``/metrics`` endpoint for the worker processes of ``--processes N``: aggregation by the supervisor.

Why aggregation rather than prometheus-client's multiprocess mode: that mode counts only
metric objects (``Counter``, ``Histogram``) writing to mmap files, and the engine's
collector (``monque_engine.metrics``) builds its families from engine events and store
reads on each scrape; it would need a second, file-backed implementation of every series.
Instead each child serves its own collector on a loopback port it reports to the
supervisor (``child_link``), and a scrape of the group's endpoint scrapes every child and
merges the families:

* what each process counts is **summed** sample by sample (label set by label set): the
  job counters, the duration histogram (every child uses the same buckets, so bucket,
  ``_sum`` and ``_count`` add up), ``monque_feed_state`` (how many processes are in each
  state) and the process's CPU, memory and file counts;
* what describes the **store** (``monque_jobs``, due, scheduled, latency, paused,
  consumers, instances, ``monque_store_up``) is the same whoever reads it: taken from one
  child, not multiplied by N;
* ``process_start_time_seconds`` is the earliest, ``process_max_fds`` and ``python_info``
  one child's.

A child that dies takes its counts with it; the supervisor keeps the last counter and
histogram values it scraped from each child and adds them to the group's, so the group's
counters only go up across restarts (what a counter promises; only the runs a dead child
finished after the last scrape are lost). The supervisor adds two series of its own:
``monque_worker_processes{state="up"|"configured"}`` and ``monque_worker_restarts_total``.
"""

from __future__ import annotations

import concurrent.futures
import threading
import urllib.request
from collections.abc import Callable, Iterable, Sequence

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector

from monque_engine.metrics import MetricsServer

from .child_link import ChildEndpoint

#: Families that describe the store: one child's values stand for the group's.
STORE_WIDE = frozenset(
    {
        "monque_store_up",
        "monque_jobs",
        "monque_jobs_due",
        "monque_jobs_scheduled",
        "monque_queue_latency_seconds",
        "monque_queue_paused",
        "monque_queue_consumers",
        "monque_instances",
    }
)
FIRST_ONLY = frozenset({"process_max_fds", "python_info"})
EARLIEST = frozenset({"process_start_time_seconds"})
#: A child's scrape that takes longer is left out of this scrape of the group.
SCRAPE_TIMEOUT = 5.0

SampleKey = tuple[str, tuple[tuple[str, str], ...]]


def scrape_text(port: int, timeout: float = SCRAPE_TIMEOUT) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as response:
        return str(response.read().decode())


class _Family:
    def __init__(self, name: str, documentation: str, kind: str, unit: str) -> None:
        self.name, self.documentation, self.kind, self.unit = name, documentation, kind, unit
        self.samples: dict[SampleKey, float] = {}


def _families(text: str) -> list[_Family]:
    found = []
    for parsed in text_string_to_metric_families(text):
        family = _Family(parsed.name, parsed.documentation, parsed.type, parsed.unit)
        for sample in parsed.samples:
            if sample.name.endswith("_created"):
                continue  # an instant, not an amount: meaningless summed
            family.samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
        found.append(family)
    return found


def merge(children: Sequence[list[_Family]], retired: dict[str, _Family]) -> list[_Family]:
    """The group's families from each child's, by the rules in the module docstring.

    ``retired``: per family, counter and histogram samples of children that are gone, added in.
    """
    merged: dict[str, _Family] = {}
    for families in children:
        for family in families:
            into = merged.get(family.name)
            if into is None:
                into = merged[family.name] = _Family(family.name, family.documentation, family.kind, family.unit)
            for key, value in family.samples.items():
                if key not in into.samples:
                    into.samples[key] = value
                elif family.name in STORE_WIDE or family.name in FIRST_ONLY:
                    continue
                elif family.name in EARLIEST:
                    into.samples[key] = min(into.samples[key], value)
                else:
                    into.samples[key] += value
    for name, gone in retired.items():
        kept = merged.get(name)
        if kept is None:  # no live child serves it now (all restarting): the gone ones' counts alone
            kept = merged[name] = _Family(gone.name, gone.documentation, gone.kind, gone.unit)
        for key, value in gone.samples.items():
            kept.samples[key] = kept.samples.get(key, 0.0) + value
    return list(merged.values())


def _retirable(family: _Family) -> bool:
    return family.kind in ("counter", "histogram") and family.name not in STORE_WIDE


class GroupCollector(Collector):
    """Scrapes every live child on each ``collect()`` (from the endpoint's thread)."""

    def __init__(self, endpoints: Callable[[], list[ChildEndpoint]], configured: int, restarts: Callable[[], int]):
        self._endpoints = endpoints
        self._configured = configured
        self._restarts = restarts
        self._lock = threading.Lock()
        #: slot -> (instance, its last counter/histogram families) and what gone children counted.
        self._last: dict[int, tuple[str, list[_Family]]] = {}
        self._retired: dict[str, _Family] = {}
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="monque-group-scrape")

    def _retire(self, families: list[_Family]) -> None:
        for family in families:
            if _retirable(family):
                into = self._retired.get(family.name)
                if into is None:
                    into = self._retired[family.name] = _Family(
                        family.name, family.documentation, family.kind, family.unit
                    )
                for key, value in family.samples.items():
                    into.samples[key] = into.samples.get(key, 0.0) + value

    def describe(self) -> Iterable[Metric]:
        return []  # families depend on what the children serve: nothing to describe up front

    def collect(self) -> Iterable[Metric]:
        with self._lock:  # concurrent scrapes of the group would retire a child twice
            return list(self._collect())

    def _collect(self) -> Iterable[Metric]:
        endpoints = self._endpoints()
        live = {(endpoint.slot, endpoint.instance) for endpoint in endpoints}
        for slot, (instance, families) in list(self._last.items()):
            if (slot, instance) not in live:  # the child is gone: what it counted stays in the group's
                self._retire(families)
                del self._last[slot]
        futures = {endpoint: self._pool.submit(scrape_text, endpoint.port) for endpoint in endpoints}
        children: list[list[_Family]] = []
        answered = 0
        for endpoint, future in futures.items():
            try:
                families = _families(future.result())
            except Exception:  # noqa: BLE001 - a child busy or stopping: its last counts stand in
                last = self._last.get(endpoint.slot)
                if last is not None and last[0] == endpoint.instance:
                    children.append(last[1])
                continue
            answered += 1
            self._last[endpoint.slot] = (endpoint.instance, [f for f in families if _retirable(f)])
            children.append(families)
        for family in merge(children, self._retired):
            metric = Metric(family.name, family.documentation, family.kind, family.unit)
            for (sample_name, labels), value in family.samples.items():
                metric.add_sample(sample_name, dict(labels), value)
            yield metric
        processes = GaugeMetricFamily(
            "monque_worker_processes", "Worker processes of this supervisor (--processes).", labels=["state"]
        )
        processes.add_metric(["configured"], self._configured)
        processes.add_metric(["up"], answered)
        yield processes
        yield CounterMetricFamily(
            "monque_worker_restarts", "Worker processes this supervisor restarted after they died.", self._restarts()
        )

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class GroupMetricsServer(MetricsServer):
    """The group's ``/metrics`` (one worker's ``MetricsServer``), closing its collector too."""

    def __init__(self, collector: GroupCollector, host: str, port: int) -> None:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(collector)
        super().__init__(*start_http_server(port, host, registry))
        self._collector = collector

    def close(self) -> None:
        super().close()
        self._collector.close()


def serve_group(
    endpoints: Callable[[], list[ChildEndpoint]], configured: int, restarts: Callable[[], int], host: str, port: int
) -> GroupMetricsServer:
    """Serve the group's ``/metrics``; raises ``OSError`` when the address cannot be bound."""
    return GroupMetricsServer(GroupCollector(endpoints, configured, restarts), host, port)


__all__ = ["ChildEndpoint", "GroupCollector", "GroupMetricsServer", "merge", "serve_group"]
