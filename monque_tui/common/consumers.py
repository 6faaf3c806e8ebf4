"""Who consumes each job name: the live registered instances that handle it.

The console's Queues view and the CLI's ``health`` both answer "is anyone working this
name?" from the instance registry, so the answer is worked out once, here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from monque_engine.fleet_records import InstanceInfo


def consumers_of(instances: list[InstanceInfo]) -> dict[str, tuple[int, int]]:
    """Per job name: how many live registered instances handle it, and their summed concurrency."""
    found: dict[str, tuple[int, int]] = {}
    for instance in instances:
        if not instance.alive:
            continue
        for name, concurrency in instance.workers.items():
            count, total = found.get(name, (0, 0))
            found[name] = (count + 1, total + concurrency)
    return found
