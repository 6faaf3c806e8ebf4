"""Apps that the CLI tests load with ``--app apps.MODULE:ATTR`` (run with cwd = tests/cli)."""
