"""Measurements of monque_engine and its console, outside the test run.

What each module measures:

* ``run``: the throughput and latency runner (``make bench`` / ``python -m bench.run``).
  One fresh child process per measurement; prints a markdown report with ratios and saves
  it to ``bench/results/``.
* ``raw_sqlite``: the ceiling: a bare stdlib ``sqlite3`` claim+complete and insert loop
  (1 and 50 jobs per transaction; 1 and 1000 inserts per transaction), no queue library.
* ``huey_peer``: huey's ``SqliteHuey``, at its defaults and like-for-like (WAL +
  ``synchronous=NORMAL``): single-enqueue rate and backlog drain.
* ``monque_engine_bench``: this engine on SQLite at NORMAL and FULL durability: backlog
  drain, single ``enqueue``, ``enqueue_many`` in batches of 1000, and cross-process
  enqueue-to-start latency (p50/p99).
* ``report`` and ``common``: the report's table and targets; temp files, timing, records.
* ``reliability`` (``python -m bench.reliability``): seven fault and stress scenarios with
  real processes on real SQLite files (exactly-once, SIGKILL, operator races, SIGTERM,
  storage faults, bad input, change-feed integrity), counting lost and duplicated jobs
  and time to recover; ``tests/test_reliability.py`` runs the same code at small sizes.
* ``reliability_fuzz``: the bad-input scenario: hypothesis-generated names, keys,
  payloads, cron strings, cursors, selectors, ids, URLs and command lines.
* ``reliability_base``: what those two share (``Result``, the ``Workspace`` of processes,
  ``enqueue_here``, ``integrity``), below both so neither imports the other.
* ``tui_bench``: the console's first paint at 1k and 1M jobs and how fast a burst of
  changes from another process reaches the screen.
"""
