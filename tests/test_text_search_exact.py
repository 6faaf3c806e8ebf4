"""Text search means exactly the text given (issue 25, points 3 and 4).

- A NUL in a text search matched every job on SQLite (``LIKE`` stops reading its pattern at
  a NUL), and a bulk delete with it deleted them all. It is refused now, by the validation
  every listing, count and bulk call goes through; the other filter values that reach SQL
  (id / key search, name glob, name, error group, cursor) are exact or refused as well.
- The payload was searched as its JSON text: ``a"b``, a backslash, a newline or a tab were not
  found as typed, a lone backslash matched every payload with any escape, and ``nbreak``
  matched ``"line\\nbreak"`` through the escape's letter. Values are searched as typed now.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from monque_engine import InvalidCursorError, InvalidJobQueryError, JobListFilter, JobSelector, JobSort, Monque
from monque_engine.cursor import CursorAnchor, encode_cursor
from monque_engine.store.base import StoreListFilter
from monque_engine.store.mongo import documents as q
from monque_engine.textsearch import stored_payload_contains
from monque_tui.console.query import JobQuery

PAYLOADS = {
    "backslash": {"v": "back\\slash"},
    "quote": {"v": 'say "hi" twice'},
    "newline": {"v": "line\nbreak"},
    "tab": {"v": "tab\there"},
    "bell": {"v": "bell\x07ring"},
    "unicode": {"v": "café ✓ 日本"},
    "plain": {"v": "plain text", "count": 1234, "flag": True},
}


async def _seed(m: Monque) -> dict[str, str]:
    return {(await m.enqueue("t", data)).id: label for label, data in PAYLOADS.items()}


async def _found(m: Monque, labels: dict[str, str], text: str) -> set[str]:
    page = await m.get_jobs_with_cursor(filter=JobListFilter(text=text), limit=100)
    found = {labels[job.id] for job in page.jobs}
    assert await m.count_jobs(JobListFilter(text=text)) == len(found)
    assert await m.count_bulk("delete", JobSelector(text=text)) == len(found)
    return found


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("back\\slash", {"backslash"}),
        ("\\", {"backslash"}),
        ('say "hi"', {"quote"}),
        ('"', {"quote"}),
        ("line\nbreak", {"newline"}),
        ("e\n", {"newline"}),  # a newline alone is blank, refused: test_a_blank_text_search_is_refused
        ("tab\there", {"tab"}),
        ("\th", {"tab"}),
        ("\x07", {"bell"}),
        ("café ✓", {"unicode"}),
        ("CAFé", {"unicode"}),  # ASCII letters in either case
        ("1234", {"plain"}),
        ("true", {"plain"}),
        ("count", {"plain"}),  # keys are searched too
    ],
)
async def test_payload_values_are_found_as_typed(monque: Any, text: str, expected: set[str]) -> None:
    m = await monque()
    labels = await _seed(m)
    assert await _found(m, labels, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "nbreak",  # the n of the escape \n, not a letter of the value
        "there",  # the t of \t
        "u0007",  # the escape of the bell character
        "\\n",  # a backslash and an n: no value holds them
        '\\"',
        ":",  # JSON's own punctuation and quotes
        ",",
        "{",
        '"v"',
        '"plain',
        "1234,",
    ],
)
async def test_json_escapes_and_punctuation_are_not_found(monque: Any, text: str) -> None:
    m = await monque()
    labels = await _seed(m)
    assert await _found(m, labels, text) == set()


async def test_error_text_is_found_as_typed(monque: Any, raw: Any) -> None:
    m = await monque()
    labels = await _seed(m)
    failed = await m.enqueue("t", {"v": "x"})
    labels[failed.id] = "failed"
    await raw(m).set(failed.id, status="failed", failReason='open "C:\\temp\\a.txt" failed:\n\tdenied')
    assert await _found(m, labels, '"C:\\temp\\a.txt"') == {"failed"}
    assert await _found(m, labels, "failed:\n\tden") == {"failed"}
    assert await _found(m, labels, "\\") == {"backslash", "failed"}


async def test_a_nul_in_a_text_search_is_refused_and_a_bulk_call_with_it_touches_nothing(monque: Any) -> None:
    m = await monque()
    labels = await _seed(m)
    calls = [
        lambda: m.count_jobs(JobListFilter(text="\x00x")),
        lambda: m.get_jobs_with_cursor(filter=JobListFilter(text="x\x00")),
        lambda: m.count_bulk("delete", JobSelector(text="\x00x")),
        lambda: m.count_bulk("retry", JobListFilter(text="\x00")),
        lambda: m.delete_jobs(JobSelector(text="\x00x")),
        lambda: m.delete_jobs(JobListFilter(text="\x00x")),
        lambda: m.cancel_jobs(JobSelector(text="\x00x")),
        lambda: m.retry_jobs(JobSelector(text="\x00x", status="failed")),
    ]
    for call in calls:
        with pytest.raises(InvalidJobQueryError, match="NUL"):
            await call()
    assert await m.count_jobs() == len(labels)
    assert {job.status.value for job in (await m.get_jobs_with_cursor(limit=100)).jobs} == {"pending"}


async def test_every_other_filter_value_is_exact_or_refused(monque: Any) -> None:
    m = await monque()
    job = await m.enqueue("t", {"v": 1}, unique_key="key-1")
    refused = [
        (JobListFilter(search=job.id + "\x00"), "control character"),  # matched the job on SQLite
        (JobListFilter(search="key\x01"), "control character"),
        (JobListFilter(name_pattern="t\x00zz"), "control character"),  # GLOB 't' …
        (JobListFilter(name_pattern="*\x00"), "control character"),
        (JobListFilter(recurring="no"), "recurring must be"),  # type: ignore[arg-type]  # was True
        (JobListFilter(search=5), "search must be a string"),  # type: ignore[arg-type]  # was no filter
    ]
    for listing, message in refused:
        with pytest.raises(InvalidJobQueryError, match=message):
            await m.count_jobs(listing)
        with pytest.raises(InvalidJobQueryError, match=message):
            await m.delete_jobs(listing)
    # Compared whole (``=``), a NUL matched nothing; since issue 34 it is refused, as in every given field.
    for listing in (JobListFilter(name="t\x00"), JobListFilter(error_group="g\x00")):
        with pytest.raises(InvalidJobQueryError, match="control character"):
            await m.count_jobs(listing)
    assert await m.count_jobs(JobListFilter(search=f"  {job.id[:6]}\n")) == 1  # surrounding whitespace ignored
    with pytest.raises(InvalidJobQueryError, match="control character"):  # issue 34: a given filter must filter
        await m.count_jobs(JobListFilter(search="\t\n"))
    assert await m.count_jobs() == 1


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 2**70])
async def test_a_cursor_with_a_sort_value_out_of_range_is_refused(monque: Any, value: int) -> None:
    m = await monque()
    job = await m.enqueue("t", 1)
    sort = JobSort(by="created_at", direction="asc")
    cursor = encode_cursor(CursorAnchor(job.id, value), "forward", sort)
    with pytest.raises(InvalidCursorError, match="out of range"):
        await m.get_jobs_with_cursor(cursor=cursor, sort=sort)


# -- SQLite: the LIKE on the escaped needle and its Python check agree with the definition ------------
ALPHABET = ["a", "N", "n", "t", "u", "0", "7", "\\", '"', "\n", "\t", "\x01", ":", ",", "{", " ", "é", ".", "%", "_"]


def _words(rng: random.Random, count: int, longest: int) -> list[str]:
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, longest))) for _ in range(count)]


def _tokens(data: Any) -> list[str]:
    """The definition, written out independently: keys, strings, and scalars' JSON text."""
    if isinstance(data, dict):
        return [token for key, value in data.items() for token in [key, *_tokens(value)]]
    if isinstance(data, list):
        return [token for value in data for token in _tokens(value)]
    return [data] if isinstance(data, str) else [json.dumps(data)]


def _fold(text: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


async def test_random_payloads_and_needles_match_the_definition_on_sqlite(tmp_path: Path) -> None:
    rng = random.Random(25)
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        payloads: list[Any] = []
        for _ in range(120):
            words = _words(rng, 3, 6)
            shape = rng.randrange(4)
            if shape == 0:
                payloads.append({words[0]: words[1], "n": rng.randrange(100), "x": [words[2], None, 1.5]})
            elif shape == 1:
                payloads.append([words[0], {"k": words[1]}, rng.choice([True, False])])
            elif shape == 2:
                payloads.append(words[0])
            else:
                payloads.append({"deep": {"er": [words[0], words[1]]}, words[2]: -7})
        ids = [job.id for job in await m.enqueue_many([{"name": "t", "data": p} for p in payloads])]
        jobs = {job.id: job for job in (await m.get_jobs_with_cursor(limit=500)).jobs}
        # A blank needle is refused (issue 34, contract/reads/test_text_search): not searched here.
        words = [word for word in _words(rng, 150, 3) if word.strip()]
        needles = [*words, '"', "\\", ":", ',"', "7,", "true", "null", "1.5", "-7"]
        for needle in needles:
            expected = {
                i for i, p in zip(ids, payloads, strict=True) if any(_fold(needle) in _fold(t) for t in _tokens(p))
            }
            page = await m.get_jobs_with_cursor(filter=JobListFilter(text=needle), limit=500)
            assert {job.id for job in page.jobs} == expected, repr(needle)
            assert await m.count_jobs(JobListFilter(text=needle)) == len(expected), repr(needle)
            # The console judges a job arriving on the feed with the same predicate.
            assert {i for i, job in jobs.items() if JobQuery(text=needle).matches(job)} == expected, repr(needle)
    finally:
        await m.close()


async def test_a_payload_that_is_not_json_or_not_utf8_is_searched_without_failing(tmp_path: Path) -> None:
    """Rows written by hand: the Python check runs inside the query, so it must never raise
    (SQLite would fail the whole listing with "user-defined function raised exception")."""
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        await m.enqueue("t", {"v": "needle\\here"})
        bad = await m.enqueue("t", {"v": 1})
        broken = await m.enqueue("t", {"v": 2})
        store: Any = m.store
        set_data = "UPDATE monque_jobs SET data = CAST(? AS TEXT) WHERE id = ?"
        await store.execute_write(lambda conn: conn.execute(set_data, ("not json \\ needle", bad.id)))
        await store.execute_write(lambda conn: conn.execute(set_data, (b'{"v":"needle\\\\here\xff"}', broken.id)))
        assert await m.count_jobs(JobListFilter(text="needle")) == 3
        assert await m.count_jobs(JobListFilter(text="needle\\here")) == 2  # the JSON ones, decoded
        assert await m.count_bulk("delete", JobSelector(text="needle")) == 3
    finally:
        await m.close()


def test_the_sql_check_never_raises() -> None:
    assert stored_payload_contains(None, "x") is False
    assert stored_payload_contains(b"\xff\xfe not json x", "x") is True
    assert stored_payload_contains(b"[" * 100_000, "x") is False  # too deep for json: searched as text
    assert stored_payload_contains(b'{"A":"\\u0041"}', "a") is True  # keys; escapes decoded


async def test_the_read_only_console_connection_has_the_function_too(tmp_path: Path) -> None:
    writer = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await writer.initialize()
    await writer.enqueue("t", {"v": "a\\b"})
    await writer.close()
    reader = Monque(f"sqlite:///{tmp_path}/jobs.db?mode=ro")
    await reader.initialize()
    try:
        assert await reader.count_jobs(JobListFilter(text="a\\b")) == 1
    finally:
        await reader.close()
    with sqlite3.connect(tmp_path / "jobs.db") as plain:  # another program reading the file needs nothing
        assert plain.execute("SELECT count(*) FROM monque_jobs").fetchone() == (1,)


# -- MongoDB: the query documents (no server here) -------------------------------------------------
def _regexes(document: Any) -> list[str]:
    found: list[str] = []
    if isinstance(document, dict):
        for key, value in document.items():
            if key in ("$regex", "regex") and isinstance(value, str):
                found.append(value)
            else:
                found.extend(_regexes(value))
    elif isinstance(document, list):
        for item in document:
            found.extend(_regexes(item))
    return found


@pytest.mark.parametrize("text", ['a"b', "C:\\temp", "line\nbreak", "tab\there", "(x)*+?.[]{}|^$", "日本 ✓"])
def test_mongodb_searches_the_values_as_typed_with_every_metacharacter_literal(text: str) -> None:
    import re

    clause = q.list_filter(StoreListFilter(text=text))
    patterns = _regexes(clause)
    assert len(patterns) == 5  # failReason, errorType, data, and a top-level key or value
    for pattern in patterns:
        assert re.search(pattern, f"before {text.upper()} after", re.IGNORECASE)
        assert not re.search(pattern, "x" * len(text) * 2)  # no metacharacter acts as one
        if json.dumps(text)[1:-1] != text:
            assert not re.search(pattern, json.dumps(text)[1:-1])  # the JSON-escaped form is not the value


def test_mongodb_searches_top_level_keys_and_null_values() -> None:
    entry = q.text_clause("k")["$or"][3]["$expr"]["$gt"][0]["$size"]["$filter"]["cond"]["$or"]
    assert entry[0] == {"$regexMatch": {"input": "$$this.k", "regex": "k", "options": "i"}}
    assert entry[1]["$regexMatch"]["input"]["$convert"]["onNull"] == "null"
