"""The live scale bench's arithmetic: the status tabs read off a screen, and the counts' age
dated against the store's history (``bench.tui_bench``); the goals' verdicts
(``bench.scale_live``). No soak runs here: these are the parts a wrong answer would hide in."""

from __future__ import annotations

from typing import Any

from bench.scale_live import CPU_RATE, KEYS_RATE, LiveResult, table
from bench.tui_bench import _shown_tabs, counts_ages

SCREEN = """ monque sqlite:////tmp/soak.db · ● live
 1 All 701,400  2 Pending 5,000  3 Processing 0  4 Completed 686,400  5 Failed 8,000  6 Cancelled 2,000  │ all, sorted by created ↓
 completed/s 1,000.0 ▇▇▇▇▇▇▇▇▇▇█▇ peak 1,100   failed attempts/s    0.0 ······ peak 0  (last 30 s, 5 s average)
  f714d77a report.build    completed      9m ago    9m ago
"""


def test_the_tabs_are_read_whole_shortened_or_bare_and_the_stale_note_with_them():
    assert _shown_tabs(SCREEN) == ({1: 701_400, 2: 5_000, 3: 0, 4: 686_400, 5: 8_000, 6: 2_000}, None)
    short = " 1 All 10,001,400 2 Pend 500,000 3 Proc 0 4 Comp 8,500,000 5 Fail 800,000 … │ all · counts 12s old"
    assert _shown_tabs(short) == ({1: 10_001_400, 2: 500_000, 3: 0, 4: 8_500_000, 5: 800_000}, "12s")
    assert _shown_tabs(" 1 10,001,400 2 500,000 3 0 4 8,500,000 │ all") == (
        {1: 10_001_400, 2: 500_000, 3: 0, 4: 8_500_000},
        None,
    )
    assert _shown_tabs(" 1 All …  2 Pending …  4 Completed … │ all") is None  # counts not read yet


def test_a_screen_is_as_old_as_the_store_has_been_past_its_count():
    # The store completed 10 jobs every 0.1 s; its count was read every 0.1 s.
    samples = [(t / 10, 100 + 10 * t, 1_000 + 10 * t) for t in range(31)]  # up to 3.0 s, count 400
    screens = [
        (3.0, 400),  # the store's latest count: fresh
        (3.05, 390),  # 390 held until the read at 2.9, passed by 3.0: at most 0.15 s old
        (3.0, 180),  # 180 (read at 0.8) was passed by 0.9: 2.2 s old, rounded up to the 0.8 read
        (2.5, 450),  # more than the store held when read: not behind it
    ]
    ages = counts_ages(samples, screens)
    assert ages[0] == 0.0
    assert abs(ages[1] - 0.15) < 1e-9
    assert abs(ages[2] - 2.2) < 1e-9
    assert ages[3] == 0.0


def _run(rate: int, drained: float, cpu: float, age_max: float, key_p95: float) -> dict[str, Any]:
    keys = {kind: {"p95": key_p95} for kind in ("tab switch", "detail open", "sort")}
    return {
        "rate": rate,
        "drain_with_console": drained,
        "produced_per_s": rate,
        "console_cpu_pct": cpu,
        "counts_age": {"max": age_max, "p95": age_max / 2},
        "keys": keys,
    }


def _verdicts(text: str) -> dict[str, str]:
    rows = [line.split(" | ") for line in text.splitlines()[2:]]
    return {cells[0].lstrip("| "): cells[-1].rstrip(" |") for cells in rows}


def test_each_goal_is_judged_at_the_largest_size_and_only_when_the_worker_drained_its_rate():
    small = LiveResult(100_000, {KEYS_RATE: _run(1_000, 1_000, 4, 9.0, 500), CPU_RATE: _run(5_000, 5_000, 30, 1, 50)})
    large = LiveResult(10_000_000, {KEYS_RATE: _run(1_000, 990, 5, 2.05, 80), CPU_RATE: _run(5_000, 4_000, 9, 1, 50)})
    verdicts = _verdicts(table([small, large], lambda size: f"{size:,}"))
    assert verdicts["counts on screen: age, drain 1k/s"] == "**FAIL**"
    assert verdicts["key p95 (tab / detail / sort), drain 1k/s"] == "**PASS**"
    assert verdicts["console CPU, drain 5k/s"] == "**NO VERDICT**: the worker drained 4,000 jobs/s of 5,000"
