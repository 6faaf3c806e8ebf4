"""Benchmark harness for monque_engine (issue 2, "Benchmark"; DESIGN §5).

Run ``python -m bench.run`` (see ``bench/run.py`` for options). Not part of the test run.
"""
