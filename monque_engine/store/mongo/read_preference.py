"""Where a console's display reads go: the primary (default) or, when asked, a secondary.

A console refreshes its counts, pages and error groups every few seconds; with several
consoles open on a 10M-job collection those reads compete with the workers on the primary
(issue 27). ``MongoStore.set_display_read_preference("secondaryPreferred")`` sends the
reads that only *show* things (listings, counts, statistics, queue health, error groups,
names, the fleet's holdings) to a secondary when one is up, bounded by
``maxStalenessSeconds`` (``MAX_STALENESS_S``, the smallest the driver allows: a secondary
further behind is not used). Reads whose answer decides a write (claims, guards, the
console's re-read of changed jobs by id, owner liveness) always stay on the primary.

What is shown may then lag the primary; ``secondary_staleness_s`` estimates by how much,
with the Max Staleness spec's formula (PyMongo's ``max_staleness_selectors``) over the
driver's own monitoring data, so the console can say it in its header.
"""

from __future__ import annotations

from typing import Any

from pymongo.read_preferences import Primary, SecondaryPreferred, _ServerMode
from pymongo.server_type import SERVER_TYPE

#: The modes offered (off by default): others would add nothing for a console.
MODES = ("primary", "secondaryPreferred")
#: maxStalenessSeconds: PyMongo refuses less than 90 s.
MAX_STALENESS_S = 90


def read_preference(mode: str) -> _ServerMode:
    if mode == "primary":
        return Primary()
    if mode == "secondaryPreferred":
        return SecondaryPreferred(max_staleness=MAX_STALENESS_S)
    raise ValueError(f"read preference {mode!r}: use one of {', '.join(MODES)}")


def secondary_staleness_s(description: Any, heartbeat_frequency_s: float) -> float | None:
    """The worst staleness of the known secondaries in seconds, per the Max Staleness spec;
    None when there is no secondary with a known last write (reads then go to the primary)."""
    servers = list(description.server_descriptions().values())
    secondaries = [s for s in servers if s.server_type == SERVER_TYPE.RSSecondary and s.last_write_date]
    if not secondaries:
        return None
    primary = next((s for s in servers if s.server_type == SERVER_TYPE.RSPrimary and s.last_write_date), None)
    if primary is not None:
        lags = [
            (s.last_update_time - s.last_write_date)
            - (primary.last_update_time - primary.last_write_date)
            + heartbeat_frequency_s
            for s in secondaries
        ]
    else:
        newest = max(s.last_write_date for s in secondaries)
        lags = [newest - s.last_write_date + heartbeat_frequency_s for s in secondaries]
    return max(0.0, float(max(lags)))
