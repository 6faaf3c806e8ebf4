"""The Workers screen's RATE column is measured between heartbeats, not between screen refreshes.

An instance's registry record (and its ``processed`` count) is rewritten once per heartbeat,
30 s by default, while the Workers screen reads it every 2 s. The rate used to be the count's
change over the console's own 2 s: a worker doing 400 jobs/s read ``0.0/s`` for 28 s, then
``6,000/s`` for one refresh (probe 6, a tmux soak with a busy worker). These are the
``InstanceInfo`` answers ``Monque.instances()`` gives over such a run, fed to ``FleetView``
(the screen draws its ``rate`` as is).
"""

from __future__ import annotations

from datetime import UTC, datetime

from monque_engine import InstanceInfo
from monque_tui.console.session.fleet import FleetView

T0 = 1_768_478_400_000
BEAT_S = 30


def info(beat_ms: int, processed: int) -> InstanceInfo:
    return InstanceInfo(
        id="w1",
        inferred=False,
        alive=True,
        jobs_held=3,
        last_heartbeat=datetime.fromtimestamp(beat_ms / 1000, UTC),
        heartbeat_interval=BEAT_S,
        processed=processed,
    )


def test_rate_between_heartbeats_holds_steady_at_the_workers_real_rate() -> None:
    view = FleetView()
    rates: list[float | None] = []
    # 400 jobs/s; the record is rewritten every 30 s; the screen reads it every 2 s for 90 s.
    for now in range(T0, T0 + 90_000, 2_000):
        beat = T0 + (now - T0) // (BEAT_S * 1000) * BEAT_S * 1000
        [row] = view.rows([info(beat, 400 * (beat - T0) // 1000)], now)
        rates.append(row.rate)
    # Until a second heartbeat there is nothing to measure; after it, every refresh shows 400/s.
    first_measured = rates.index(next(r for r in rates if r is not None))
    assert all(r is None for r in rates[:first_measured])
    assert first_measured == BEAT_S // 2
    assert set(rates[first_measured:]) == {400.0}


def test_a_dead_instance_has_no_rate_and_a_restarted_counter_is_not_negative() -> None:
    view = FleetView()
    view.rows([info(T0, 0)], T0)
    [row] = view.rows([info(T0 + 30_000, 3_000)], T0 + 30_000)
    assert row.rate == 100.0
    # No heartbeat for more than twice its interval: dead, and it processes nothing.
    [row] = view.rows([info(T0 + 30_000, 3_000)], T0 + 95_000)
    assert row.dead and row.rate is None
    # The same id with a counter back at 0 (a restart reusing --instance-id): measured afresh.
    [row] = view.rows([info(T0 + 100_000, 10)], T0 + 100_000)
    assert row.rate is None
    [row] = view.rows([info(T0 + 130_000, 610)], T0 + 130_000)
    assert row.rate == 20.0
