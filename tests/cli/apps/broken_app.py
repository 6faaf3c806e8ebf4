"""Fails while being imported, as a typo in a user's module would."""

from __future__ import annotations

HANDLERS = undefined_name  # noqa: F821
