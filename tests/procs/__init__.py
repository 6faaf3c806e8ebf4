"""Small runnable scripts for the multi-process tests, plus the harness that drives them.

Each script is run as ``python -m tests.procs.<name> --db PATH ...`` from the repository
root and reports what it does as JSON lines on stdout (one object per line, flushed), so a
test can synchronise on what a process *says* ("ready", "job:start", "change") instead of
sleeping. ``harness.py`` holds the test-side helpers (process wrapper, store probe).
"""
