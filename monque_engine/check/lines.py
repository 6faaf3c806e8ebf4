"""One line of ``monque-tui check``'s report, and the rule every mixed fleet must keep.

A report is a list of ``CheckLine``: a verdict a script can branch on, the topic, what was
found and, when the verdict is not ``ok``, what to do. The texts are built from what the
server said; ``check_store`` masks the URL's password in every line before returning them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum


class Verdict(StrEnum):
    """``fail``: fix it before a deploy (workers would refuse to start, run jobs twice or lose
    their all-or-nothing batches); ``warn``: Monque runs, but slower or with less to go on;
    ``ok``: nothing to do."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True, slots=True)
class CheckLine:
    verdict: Verdict
    #: Short topic: "server", "replication", "clock", "change streams", ...
    topic: str
    #: What was found.
    text: str
    #: What to do about it ("" when nothing).
    fix: str = ""

    def masked(self, mask: Callable[[str], str]) -> CheckLine:
        """The same line with ``mask`` applied to what it says (a password removed)."""
        return CheckLine(self.verdict, self.topic, mask(self.text), mask(self.fix))

    def as_dict(self) -> dict[str, str]:
        return {"verdict": str(self.verdict), "check": self.topic, "text": self.text, "fix": self.fix}


#: Node Monque's ``recoverStaleJobs`` runs at every Node ``initialize()`` and re-queues each
#: processing job whose ``lockedAt`` is older than Node's ``lockTimeout`` (30 min by default),
#: whoever owns it: it never looks at heartbeats. Node records its lock timeout nowhere, so
#: the Python side cannot check it; it can only say the rule where it sees Node-like owners.
MIXED_FLEET_RULE = (
    "Node Monque's lockTimeout (30 min by default) must exceed your longest Python job: every Node "
    "worker start (a rolling deploy) re-queues each processing job locked for longer than that, "
    "Python's included, and the job runs twice"
)

#: The same rule where a line is short (the console's Workers title).
MIXED_FLEET_RULE_SHORT = (
    "Node Monque's lockTimeout must exceed your longest Python job (each Node start re-queues jobs locked longer)"
)


def worst(lines: list[CheckLine]) -> Verdict:
    """The report's verdict: its worst line."""
    verdicts = {line.verdict for line in lines}
    if Verdict.FAIL in verdicts:
        return Verdict.FAIL
    return Verdict.WARN if Verdict.WARN in verdicts else Verdict.OK
