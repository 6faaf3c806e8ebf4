"""How an error group is named to a person: by a real message of its, with its template.

A group is keyed by its message's template (``'<str>'`` for ``KeyError: 'customer_id'``),
which alone tells nothing of the diagnosis (issue 40). The errors table shows a real message;
every other place that names a group (the confirmation of ``R``/``D`` on a group, the tabs
line inside one, notices, the CLI's ``--error-group`` lines) uses ``group_label`` so they read
alike: the real message first (what a cut at the end keeps), then the template where it
differs, as the group reaches every message of that shape, not only the one shown.
"""

from __future__ import annotations

from monque_engine import ErrorGroup
from monque_engine.errorgroups import MAX_PATTERN_CHARS


def example_message(group: ErrorGroup) -> str:
    """A real message of the group, its first line (``'customer_id'``), else its template."""
    sample = group.sample_message
    if sample:
        # Only the start is read: a foreign row's message may be megabytes (as errorgroups.py).
        line = sample[: 4 * MAX_PATTERN_CHARS].strip().split("\n", 1)[0][:MAX_PATTERN_CHARS]
        if line:
            return line
    return group.pattern


def group_label(group: ErrorGroup) -> str:
    """``invoice.render KeyError: 'customer_id' (pattern: '<str>')``: name, type, a real
    message, and the template the group matches where the two differ."""
    kind = group.error_type or "(unknown type)"
    message = example_message(group)
    label = f"{group.name} {kind}: {message}" if message else f"{group.name} {kind}"
    if group.pattern and group.pattern != message:
        label += f" (pattern: {group.pattern})"
    return label


__all__ = ["example_message", "group_label"]
