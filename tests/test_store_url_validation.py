"""Store URL validation: every bad SQLite or MongoDB URL parameter is one typed error, never a
guess, and secrets in it are masked (cases the acceptance probe fed in).

The MongoDB cases need no server: the URL is refused while it is parsed, before any
connection (these use PyMongo's own option validator, not a fake of it).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from monque_engine import InvalidStoreUrlError, MonqueError, open_store
from monque_engine.store.mongo.config import InvalidMongoUrlError, parse_mongo_url
from monque_engine.store.urls import mask_secrets, mask_text


# -- SQLite ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("query", "needle"),
    [
        ("synchronous=normal&synchronous=full", "synchronous is given more than once"),
        ("busy_timeout=1&busy_timeout=1", "busy_timeout is given more than once"),
        ("inline_writes=maybe", "inline_writes must be true or false"),
    ],
)
def test_sqlite_parameters_that_would_be_guessed_are_refused(tmp_path: object, query: str, needle: str) -> None:
    with pytest.raises(InvalidStoreUrlError, match=needle):
        open_store(f"sqlite:///{tmp_path}/jobs.db?{query}")


def test_sqlite_path_with_a_nul_byte_is_a_url_error_not_an_open_failure(tmp_path: object) -> None:
    with pytest.raises(InvalidStoreUrlError, match="NUL byte"):
        open_store(f"sqlite:///{tmp_path}/jo%00bs.db")


@pytest.mark.parametrize(
    ("location", "needle"),
    [
        ("a" * 256 + ".db", "has a name of 259 bytes; file systems allow 255 per name"),
        ("é" * 128 + ".db", "has a name of 259 bytes"),  # bytes, not characters
        ("/a" * 2100 + ".db", "is 4203 bytes long; the OS allows 4095"),
    ],
)
def test_a_path_the_os_would_refuse_as_too_long_is_a_url_error(tmp_path: Path, location: str, needle: str) -> None:
    """It was ``[Errno 36] File name too long: '<the whole path>'``, and an internal error in the CLI."""
    with pytest.raises(InvalidStoreUrlError, match=needle) as raised:
        open_store(f"sqlite:///{location}")
    assert len(str(raised.value)) < 200
    open_store(f"sqlite:///{tmp_path}/{'b' * 252}.db")  # 255 bytes: allowed


@pytest.mark.parametrize("tail", ["jobs.db#frag", "jobs.db?mode=rwc#x", "jobs.db#"])
def test_sqlite_url_with_a_fragment_is_refused_and_creates_no_file(tmp_path: Path, tail: str) -> None:
    with pytest.raises(InvalidStoreUrlError, match="write %23 if it is part of the file name"):
        open_store(f"sqlite:///{tmp_path}/{tail}")
    assert list(tmp_path.iterdir()) == []


def test_a_hash_in_a_file_name_is_written_as_percent_23(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/jobs%231.db")
    assert store.settings.path == str(tmp_path / "jobs#1.db")  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", ["0", "false", "OFF", "1", "true", "Yes"])
def test_sqlite_inline_writes_accepts_the_usual_booleans(tmp_path: object, value: str) -> None:
    store = open_store(f"sqlite:///{tmp_path}/jobs.db?inline_writes={value}")
    assert store.settings.inline_writes is (value.lower() in ("1", "true", "yes"))  # type: ignore[attr-defined]


# -- MongoDB --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("query", "needle"),
    [
        ("replSet=rs0", "option 'replSet' not accepted by the driver (Unknown option"),
        ("badopt=1", "option 'badopt'"),
        ("authMechanism=NOPE", "option 'authMechanism'"),
        ("retryWrites=maybe", "option 'retryWrites'"),
        ("maxPoolSize=-1", "option 'maxPoolSize'"),
        ("replicaSet=a&replicaSet=b", "option 'replicaset' is given more than once"),
        ("tls=true&ssl=false", "conflicting values"),
    ],
)
def test_mongodb_options_the_driver_would_only_warn_about_are_errors(query: str, needle: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the driver's UserWarning used to print two lines and drop the option
        with pytest.raises(InvalidMongoUrlError) as caught:
            parse_mongo_url(f"mongodb://u:s3cr3t@db1/app?{query}")
    assert needle in str(caught.value)
    assert "s3cr3t" not in str(caught.value)
    assert isinstance(caught.value, InvalidStoreUrlError) and isinstance(caught.value, MonqueError)


def test_mongodb_good_options_still_pass() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        settings = parse_mongo_url(
            "mongodb://db1,db2/app?replicaSet=rs0&w=majority&retryWrites=false&appName=x"
            "&readPreference=secondaryPreferred&readPreferenceTags=dc:ny&readPreferenceTags="
        )
    assert settings.database == "app"


def test_a_bad_option_value_is_never_quoted_back() -> None:
    with pytest.raises(InvalidMongoUrlError) as caught:
        parse_mongo_url("mongodb://db1/app?tlsCertificateKeyFilePassword=k3yp4ss&retryWrites=maybe")
    assert "k3yp4ss" not in str(caught.value)


# -- secrets in the query string ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("mongodb://u:pw@h/d?tlsCertificateKeyFilePassword=k3yp4ss&w=1", "k3yp4ss"),
        ("mongodb://h/d?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:tok3n,X:y", "tok3n"),
        ("mongodb://h/d?authMechanismProperties=AWS_SESSION_TOKEN%3Atok3n", "tok3n"),
        ("cannot reach mongodb://h/d?x=1&clientSecret=s3cr3t now", "s3cr3t"),
    ],
)
def test_secret_query_values_are_masked(text: str, secret: str) -> None:
    masked = mask_text(text)
    assert secret not in masked and "***" in masked
    assert mask_text("mongodb://h/d?replicaSet=rs0&w=majority") == "mongodb://h/d?replicaSet=rs0&w=majority"


def test_a_driver_echoing_a_query_secret_alone_is_masked() -> None:
    url = "mongodb://h/d?tlsCertificateKeyFilePassword=k3yp4ss"
    assert mask_secrets("could not decrypt key with 'k3yp4ss'", url) == "could not decrypt key with '***'"


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("mongodb://db1:99999/app", "Port must be an integer between 0 and 65535"),
        ("mongodb://u:s3cr%et@db1/app", "must be escaped according to RFC 3986"),
        ("mongodb://u:s3:cr3t@db1/app", "must be escaped according to RFC 3986"),
        ("mongodb+srv://cluster0.example.net:27017/app", "names one host name, without a port"),
    ],
)
def test_mongodb_hosts_and_credentials_the_driver_refuses_are_refused_when_the_client_is_built(
    url: str, needle: str
) -> None:
    """The driver refuses them only when its client is made (at initialize()): every call then
    raised ConnectionError, "cannot reach", and tried to open again (a probe of the Python API)."""
    from monque_engine import Monque, SyncMonque

    for build in (parse_mongo_url, Monque, SyncMonque):
        with pytest.raises(InvalidMongoUrlError) as caught:
            build(url)
        assert needle in str(caught.value) and "s3cr" not in str(caught.value)


def test_mongodb_hosts_the_driver_takes_still_pass() -> None:
    for url in ("mongodb://u:p%40ss@db1,db2:27018/app", "mongodb://[::1]:27017/app", "mongodb+srv://c0.example.net/a"):
        assert parse_mongo_url(url).database in ("app", "a")


def test_a_short_mongodb_password_is_masked_where_it_stands_alone_only() -> None:
    """Every translated driver error passed through a plain replace: with the password "p",
    "option 'replSet' not accepted" read "o***tion 're***lSet' not acce***ted"; and a
    password the driver decodes with + as a space was left as decoded (a MongoDB review)."""
    from monque_engine.store.mongo.config import mask_password

    assert mask_password("option 'replSet' not accepted", "mongodb://u:p@h/db") == "option 'replSet' not accepted"
    assert mask_password("bad auth: p", "mongodb://u:p@h/db") == "bad auth: ***"
    assert mask_password("auth failed for s3cr et", "mongodb://u:s3cr+et@h/db") == "auth failed for ***"


def test_a_masked_query_secret_keeps_the_texts_closing_quote() -> None:
    """``MongoDB URL 'mongodb://h/app?mysecret=***  option …``: the mask took the quote and
    colon after the value with it (a docs probe). A quote inside the value is still masked."""
    assert mask_text("URL 'mongodb://h/app?mysecret=abc123': bad") == "URL 'mongodb://h/app?mysecret=***': bad"
    assert mask_text("(mongodb://h/app?token=abc123)") == "(mongodb://h/app?token=***)"
    assert "cd" not in mask_text("mongodb://h/app?password=ab'cd&x=1")
