"""A password never prints: ``mask_url`` / ``mask_text`` on well-formed and malformed URLs."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from monque_engine import mask_url
from monque_engine.store.urls import mask_secrets, mask_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mongodb://u:s3cret@h/db", "mongodb://u:***@h/db"),
        ("mongodb:/u:s3cret@h/db", "mongodb:/u:***@h/db"),  # one slash
        ("mongodb//u:s3cret@h/db", "mongodb//u:***@h/db"),  # no colon after the scheme
        ("mongodb:u:s3cret@h/db", "mongodb:***@h/db"),  # no slash at all: over-masked, not leaked
        (" mongodb://u:s3cret@h/db", " mongodb://u:***@h/db"),  # a leading space
        ("mongodb://u:s3c@ret@h/db", "mongodb://u:***@h/db"),  # an unescaped @ in the password
        ("mongodb://u:s3c/ret@h/db", "mongodb://u:***@h/db"),  # an unescaped / in the password
        ("mongodb://u:/s3cret@h/db", "mongodb://u:***@h/db"),  # a password starting with /
        ("mongodb+srv://u:s3cret@cluster0.example.net/db", "mongodb+srv://u:***@cluster0.example.net/db"),
        (
            "mongodb://u:s3cret@h1:27017,h2:27018,h3/db?replicaSet=rs0",
            "mongodb://u:***@h1:27017,h2:27018,h3/db?replicaSet=rs0",
        ),
        ("mongodb://:s3cret@h/db", "mongodb://:***@h/db"),  # no user name
        ("u:s3cret@h/db", "u:***@h/db"),  # no scheme at all
        ("Store URL 'mongodb//u:s3cret@h' has no scheme", "Store URL 'mongodb//u:***@h' has no scheme"),
        ("url=mongodb://u:s3cret@h", "url=mongodb://u:***@h"),
        ("a mongodb://u:pw1@a and b redis://v:pw2@b", "a mongodb://u:***@a and b redis://v:***@b"),
    ],
)
def test_mask_url_hides_the_password(text: str, expected: str) -> None:
    assert mask_url(text) == expected
    assert mask_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "mongodb://h/db",
        "mongodb://u@h/db",
        "sqlite:///var/lib/jobs.db",
        "sqlite:///data/jobs@v2.db",
        "no urls here",
        "mail bob@example.com",
        "12:30 done",
    ],
)
def test_text_without_a_password_is_unchanged(text: str) -> None:
    assert mask_text(text) == text


def test_mask_secrets_also_hides_the_bare_password_and_a_password_with_a_space() -> None:
    url = "mongodb://u:my secret@h/db"
    assert mask_secrets("auth failed for user u with my secret", url) == "auth failed for user u with ***"


_PASSWORD = st.text(
    st.characters(blacklist_categories=("Zs", "Zl", "Zp", "Cc", "Cs"), blacklist_characters="\x85\x1c\x1d\x1e\x1f"),
    min_size=4,
    max_size=24,
)
_USER = st.from_regex(r"[A-Za-z0-9._%-]{0,8}", fullmatch=True)
_SCHEME = st.sampled_from(["mongodb://", "mongodb+srv://", "mongodb:/", "mongodb//", "mongodb:", "redis://", ""])
_HOSTS = st.sampled_from(["h", "db1:27017,db2:27017,db3:27017", "cluster0.example.net", "127.0.0.1:9"])
_PATH = st.sampled_from(["", "/app", "/app?replicaSet=rs0&authSource=admin", "/"])
_AROUND = st.sampled_from(
    [
        ("", ""),
        (" ", ""),
        ("cannot open ", ": refused"),
        ("Store URL '", "' is bad"),
        ('{"url": "', '"}'),
        ("(", ") contact admin@example.com"),
    ]
)


@given(scheme=_SCHEME, user=_USER, password=_PASSWORD, hosts=_HOSTS, path=_PATH, around=_AROUND)
def test_a_generated_password_never_survives_masking(
    scheme: str, user: str, password: str, hosts: str, path: str, around: tuple[str, str]
) -> None:
    before, after = around
    url = f"{scheme}{user}:{password}@{hosts}{path}"
    text = f"{before}{url}{after}"
    # The password must be told apart from the rest of the text to be found in it.
    assume(password not in text.replace(f"{user}:{password}@", ""))
    assert password not in mask_text(text)
    assert password not in mask_url(url)
    assert password not in mask_secrets(text, url)


def test_a_short_password_is_masked_where_it_stands_alone_not_inside_words() -> None:
    """A one-letter password masked every such letter: "o***tion not acce***ted" (probe finding)."""
    url = "mongodb://u:p@h/db"
    assert mask_secrets("option not accepted; pool paused", url) == "option not accepted; pool paused"
    assert mask_secrets("auth failed with password 'p' (p)", url) == "auth failed with password '***' (***)"
    assert "pw" not in mask_secrets("user u, pw", "mongodb://u:pw@h/db")
    # Three characters or more: masked everywhere, inside words too (a prefix could give it away).
    assert mask_secrets("secretive secret", "mongodb://u:secret@h/db") == "***ive ***"
