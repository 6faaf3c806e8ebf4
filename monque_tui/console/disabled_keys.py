"""Why a key did nothing: one line for a key whose action does not apply now.

Textual skips a binding whose ``check_action`` says "disabled" (greyed in the footer) and
the key then does nothing at all: ``c`` on a completed job, every action key in a read-only
console, ``R`` on a pending view, ``P`` without a name filter (probe finding: keys that did
nothing with no explanation). A screen can say why in its own words
(``disabled_reason``); otherwise the registry's help text says what the key needs.
"""

from __future__ import annotations

from textual.actions import parse as parse_action

from .bindings import MUTATING_ACTIONS, REGISTRY, KeyAction, display_keys

BY_BOUND_ACTION: dict[str, KeyAction] = {}
for _spec in REGISTRY:
    BY_BOUND_ACTION.setdefault(_spec.action, _spec)

READ_ONLY = "Read-only console (started with --read-only): cancel, retry, reschedule, delete and pause are off."


def explain(screen: object, bound_action: str, read_only: bool) -> str:
    """The line for a disabled key bound to ``bound_action`` (e.g. ``act('cancel')``); "" to stay quiet."""
    _, name, parameters = parse_action(bound_action)
    if read_only and name in MUTATING_ACTIONS:
        return READ_ONLY
    # A screen's ``disabled_reason(name, parameters)``: its words, "" for nothing worth saying,
    # None for the generic line.
    own = getattr(screen, "disabled_reason", None)
    if own is not None:
        reason = own(name, parameters)
        if reason is not None:
            return str(reason)
    spec = BY_BOUND_ACTION.get(bound_action)
    if spec is None:
        return ""
    return f"{spec.description} ({display_keys(spec)}) does not apply here now. It does this: {spec.help or spec.description}."
