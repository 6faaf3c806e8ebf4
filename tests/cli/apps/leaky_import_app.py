"""Fails while being imported with the URL (and its password) in the exception text."""

from __future__ import annotations

import os

raise RuntimeError("cannot reach mongodb://alice:" + os.environ.get("TEST_SECRET", "s3cr3t-pw") + "@db1/app")
