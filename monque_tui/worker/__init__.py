"""Headless mode (``--worker``): the processor pool runner, its logging, and ``--app`` loading."""
