"""A NUL in a search pattern and an unpaired surrogate in an instance id: text no store can
take as given is escaped or refused clearly (found by acceptance probe round 5).

- A NUL in a search, a text search or a name glob went into MongoDB's ``$regex`` /
  ``$regexMatch`` as a NUL byte, which the server refuses ("Regular expression cannot contain
  an embedded null byte"): on MongoDB the listing failed where SQLite answered. The pattern now
  spells it ``\\x00``, which PCRE (the server) and Python's ``re`` read as that character.
  Checked on the query documents (no MongoDB server here), matched with Python's ``re``.
- An unpaired surrogate as the instance id of ``count_dead_owner_jobs`` /
  ``release_dead_owner_jobs`` reached sqlite3 and raised a raw ``UnicodeEncodeError``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from monque_engine import InvalidJobQueryError, Monque
from monque_engine.job import name_glob_regex
from monque_engine.store.base import StoreListFilter
from monque_engine.store.mongo.documents import list_filter


def _regexes(document: Any) -> Iterator[str]:
    """Every pattern a query document hands the server (``$regex`` and ``$regexMatch.regex``)."""
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "$regex" or (key == "regex" and isinstance(value, str)):
                yield value
            else:
                yield from _regexes(value)
    elif isinstance(document, list):
        for item in document:
            yield from _regexes(item)


@pytest.mark.parametrize(
    ("filter", "subject"),
    [
        (StoreListFilter(search="key\x00part"), "a-key\x00part-b"),
        (StoreListFilter(text="a\x00b"), "xxA\x00Bxx"),
        (StoreListFilter(name_pattern="job\x00*"), "job\x00-1"),
    ],
    ids=["search", "text", "name_pattern"],
)
def test_a_nul_in_a_mongodb_pattern_is_escaped_and_still_matches_it(filter: StoreListFilter, subject: str) -> None:
    patterns = list(_regexes(list_filter(filter)))
    assert patterns, "the filter should hold a regular expression"
    assert all("\x00" not in pattern for pattern in patterns), patterns
    assert any(re.search(pattern, subject, re.IGNORECASE) for pattern in patterns)
    assert not any(re.search(pattern, subject.replace("\x00", "0"), re.IGNORECASE) for pattern in patterns)


def test_the_name_glob_regex_holds_no_nul() -> None:
    pattern = name_glob_regex("a\x00?")
    assert "\x00" not in pattern
    assert re.fullmatch(pattern, "a\x00z") and not re.fullmatch(pattern, "a0z")


async def test_an_instance_id_with_an_unpaired_surrogate_is_a_clear_error(tmp_path: Path) -> None:
    m = Monque(f"sqlite:///{tmp_path}/jobs.db")
    await m.initialize()
    try:
        job = await m.enqueue("t", 1)
        for call in (m.count_dead_owner_jobs("w\ud800"), m.release_dead_owner_jobs("\udfff")):
            with pytest.raises(InvalidJobQueryError, match="unpaired surrogate"):
                await call
        stored = await m.get_job(job.id)
        assert stored is not None and stored == job.replace(data=1)
    finally:
        await m.close()
