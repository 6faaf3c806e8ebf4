"""Upstream parity: job names and unique keys (``tests/unit/job-identifiers.test.ts``).

Upstream refuses names with JS whitespace (``\\s``) or control characters (``\\p{Cc}``: C0
*and* C1), keys with control characters, and measures both limits in UTF-16 code units (a
character beyond U+FFFF counts twice). A Node producer and a Python one must accept exactly
the same identifiers, or a job one side stores cannot be handled or deduplicated by the other.
"""

from __future__ import annotations

import pytest

from monque_engine import InvalidJobIdentifierError

EMOJI = "\U0001f600"  # one character, two UTF-16 units


def _short(value: str) -> str:
    return f"{ascii(value)[:24]}-len{len(value)}"


@pytest.mark.parametrize(
    "name", ["email:send.v2_worker-1", "job-*/15-*-*-*-*", "café", "b" * 255, "a" + EMOJI * 127], ids=_short
)
async def test_supported_names_are_accepted(monque, name):
    m = await monque()
    assert (await m.enqueue(name, {})).name == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "email send",
        "\x00",
        "email\nsend",
        "a" + "b" * 255,
        "email\x85send",  # NEL: C1 control and whitespace
        "email\x80send",  # C1 control
        "email\x9fsend",  # C1 control
        "email\ufeffsend",  # BOM: whitespace to JavaScript
        "email\xa0send",  # NBSP
        "ab" + EMOJI * 127,  # 256 UTF-16 units
    ],
    ids=_short,
)
async def test_unsupported_names_are_refused_and_nothing_is_stored(monque, name):
    m = await monque()
    with pytest.raises(InvalidJobIdentifierError) as info:
        await m.enqueue(name, {})
    assert info.value.field == "name"
    assert await m.get_jobs() == []


@pytest.mark.parametrize("key", ["tenant-42:user:abc 123", "a" * 1024, EMOJI * 512], ids=_short)
async def test_supported_unique_keys_are_accepted(monque, key):
    m = await monque()
    assert (await m.enqueue("job", {}, unique_key=key)).unique_key == key


@pytest.mark.parametrize(
    "key",
    ["", "   ", "\ufeff", "tenant\n42", "tenant\x85 42", "tenant\x9f42", "a" * 1025, "a" + EMOJI * 512],
    ids=_short,
)
async def test_unsupported_unique_keys_are_refused_and_nothing_is_stored(monque, key):
    m = await monque()
    with pytest.raises(InvalidJobIdentifierError) as info:
        await m.enqueue("job", {}, unique_key=key)
    assert info.value.field == "uniqueKey"
    assert await m.get_jobs() == []
