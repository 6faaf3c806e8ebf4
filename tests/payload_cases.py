"""The payload filter's cases, shared by the SQLite and the MongoDB tests (issue 40 item 5):
each store's answer for every (term, payload) must equal ``DataTerm.matches``, the reference."""

from __future__ import annotations

from typing import Any

from monque_engine.payload_filter import parse_term

PAYLOADS: list[Any] = [
    {"customer_id": "c-1", "tenant": "acme", "amount": 5},
    {"tenant": "acme", "amount": 5.0},
    {"tenant": "globex", "amount": "5"},
    {"customer_id": None, "amount": True},
    {"customer_id": 0, "amount": 1},
    {"nested": {"customer_id": "c-2", "deep": {"x": False}}},
    {"nested": [{"customer_id": "c-3"}], "tenant": ["acme"]},
    {"nested": "not an object", "amount": [5]},
    [{"customer_id": "in a list"}],
    "a bare string",
    {},
]

TERMS = [
    "data.customer_id missing",
    "data.customer_id exists",
    "data.customer_id = null",
    "data.tenant = acme",
    'data.tenant = "acme"',
    "data.amount = 5",
    "data.amount = 5.0",
    'data.amount = "5"',
    "data.amount = true",
    "data.amount = 1",
    "data.customer_id = 0",
    "data.customer_id = false",
    "data.nested.customer_id exists",
    "data.nested.customer_id missing",
    "data.nested.customer_id = c-2",
    "data.nested.deep.x = false",
    "data.nested.deep.x missing",
]


def expected(term_text: str) -> list[int]:
    """The indexes into ``PAYLOADS`` the term matches, by the reference semantics."""
    term = parse_term(term_text)
    return [i for i, payload in enumerate(PAYLOADS) if term.matches(payload)]
