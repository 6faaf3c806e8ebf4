"""``--processes``' one metrics endpoint (monque_tui.worker.group_metrics): how the children's
families merge, from exposition text as the children serve it. The whole path, real processes
scraped over HTTP, is tests/cli/test_cli_worker_processes.py."""

from __future__ import annotations

from monque_tui.worker.group_metrics import _families, merge

CHILD = """\
# HELP monque_jobs_processed_total Job runs this process finished (completed or failed).
# TYPE monque_jobs_processed_total counter
monque_jobs_processed_total{{name="a"}} {processed}
# HELP monque_job_duration_seconds Handler run time of jobs this process completed.
# TYPE monque_job_duration_seconds histogram
monque_job_duration_seconds_bucket{{le="0.01",name="a"}} {fast}
monque_job_duration_seconds_bucket{{le="+Inf",name="a"}} {processed}
monque_job_duration_seconds_sum{{name="a"}} {seconds}
monque_job_duration_seconds_count{{name="a"}} {processed}
# HELP monque_jobs Jobs in the store by name and status (the store's kept counts).
# TYPE monque_jobs gauge
monque_jobs{{name="a",status="completed"}} {store}
# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.
# TYPE process_start_time_seconds gauge
process_start_time_seconds {started}
"""


def child(processed: int, fast: int, seconds: float, store: int, started: float) -> str:
    return CHILD.format(processed=processed, fast=fast, seconds=seconds, store=store, started=started)


def samples(families: list) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:  # type: ignore[type-arg]
    return {key: value for family in families for key, value in family.samples.items()}


def key(sample: str, **labels: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    return (sample, tuple(sorted(labels.items())))


def test_counters_and_histograms_add_up_and_store_gauges_count_once() -> None:
    one = _families(child(3, 1, 0.5, 9, 100.0))
    two = _families(child(6, 4, 1.25, 9, 50.0))
    merged = samples(merge([one, two], {}))
    assert merged[key("monque_jobs_processed_total", name="a")] == 9
    assert merged[key("monque_job_duration_seconds_bucket", le="0.01", name="a")] == 5
    assert merged[key("monque_job_duration_seconds_bucket", le="+Inf", name="a")] == 9
    assert merged[key("monque_job_duration_seconds_count", name="a")] == 9
    assert merged[key("monque_job_duration_seconds_sum", name="a")] == 1.75
    assert merged[key("monque_jobs", name="a", status="completed")] == 9  # the store's, not 18
    assert merged[key("process_start_time_seconds")] == 50.0  # the earliest


def test_counts_of_a_gone_child_stay_in_the_groups_counters() -> None:
    gone = {family.name: family for family in _families(child(4, 2, 1.0, 9, 1.0)) if family.kind != "gauge"}
    merged = samples(merge([_families(child(1, 1, 0.1, 9, 2.0))], gone))
    assert merged[key("monque_jobs_processed_total", name="a")] == 5
    assert merged[key("monque_job_duration_seconds_count", name="a")] == 5
    assert merged[key("monque_jobs", name="a", status="completed")] == 9
    alone = samples(merge([], gone))  # every child restarting: the gone ones' counts alone
    assert alone[key("monque_jobs_processed_total", name="a")] == 4
