"""Check a store URL before anything starts, and say in one line what is wrong with it.

The console opens its store inside the Textual app; a failure there would flash a
full-screen app and vanish. Checking first means every mode reports a bad URL the same
way: one masked line and a non-zero exit, before any screen is drawn or handler imported.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from monque_engine import InvalidStoreUrlError, MonqueError, open_store
from monque_engine.daemon_call import call_in_thread
from monque_engine.store import locate_store
from monque_engine.store.filekind import special_file_kind
from monque_engine.store.urls import mask_secrets, mask_url

from ..common.exitcodes import STOP_SIGNALS, CliError, ExitCode, StoppedBeforeStart

SQLITE_MAGIC = b"SQLite format 3\x00"
_SCHEMES = ("sqlite", "mongodb", "mongodb+srv")


def _masked(text: str, url: str) -> str:
    return mask_secrets(text, url)


def check_url(url: str, *, connect_timeout: float = 5.0) -> None:
    """Raise ``CliError`` if ``url`` cannot name a usable store; return quietly otherwise."""
    if "://" not in url:
        refuse_a_mistyped_command(url)
        hint = ""
        scheme, colon, rest = url.partition(":")
        if colon and scheme.lower() in _SCHEMES:  # sqlite:/jobs.db, mongodb:/host: the slashes are off
            rest = rest.lstrip("/")
            meant = (
                f"sqlite:///{rest}, or sqlite:////{rest} for an absolute path"
                if scheme.lower() == "sqlite"
                else mask_url(f"{scheme}://{rest}")
            )
            raise CliError(
                f"Store URL {mask_url(url)!r} lacks the slashes after {scheme}: (did you mean {meant}?)",
                ExitCode.USAGE,
            )
        if url.endswith((".db", ".sqlite", ".sqlite3")) or "/" in url:
            hint = f" (did you mean sqlite:///{url}?)"
        raise CliError(
            f"Store URL {mask_url(url)!r} has no scheme{hint}; use sqlite:///path/to/jobs.db or mongodb://host/db",
            ExitCode.USAGE,
        )
    scheme = url.split("://", 1)[0].lower()
    if scheme not in _SCHEMES:
        raise CliError(
            f"Unknown store URL scheme {scheme!r} in {mask_url(url)!r}; use sqlite:///path/to/jobs.db, "
            "mongodb://host/db or mongodb+srv://host/db",
            ExitCode.USAGE,
        )
    if scheme == "sqlite":
        _check_sqlite(url)
    else:
        _check_mongodb(url, connect_timeout)


# Words other queues' CLIs (rq, celery, huey, dramatiq) and habit use for what a command does
# here: ``monque-tui list`` read "Store URL 'list' has no scheme", and ``list --help`` printed
# the main help as if it were the list command's (review).
_WORDS_FOR_COMMANDS = {
    "list": "export",
    "ls": "export",
    "jobs": "export",
    "show": "export",
    "dump": "export",
    "stats": "health",
    "status": "health",
    "info": "health",
    "workers": "instances",
    "ps": "instances",
    "rm": "delete",
    "remove": "delete",
    "purge": "delete",
    "requeue": "retry",
    "rerun": "retry",
}


def refuse_a_mistyped_command(word: str) -> None:
    """``monque-tui exprot`` read as a store URL: "Store URL 'exprot' has no scheme". A bare
    word close to a command's name, or another tool's word for one, is named as the command
    it likely was."""
    import difflib

    from .parser import COMMANDS, PROG

    if not word or word in COMMANDS or any(mark in word for mark in "/.:@\\"):
        return
    if word.lower().lstrip("-") in ("help", "h"):
        raise CliError(f"{word!r} is not a command or a store URL; for help: {PROG} --help", ExitCode.USAGE)
    close = difflib.get_close_matches(word.lower(), COMMANDS, n=2, cutoff=0.6)
    if not close and word.lower() in _WORDS_FOR_COMMANDS:
        close = [_WORDS_FOR_COMMANDS[word.lower()]]
    if close:
        raise CliError(
            f"{word!r} is not a command or a store URL; did you mean {' or '.join(close)}? (see {PROG} --help)",
            ExitCode.USAGE,
        )


async def check_url_in_thread(url: str, *, connect_timeout: float = 5.0) -> None:
    """``check_url`` from a running event loop, the loop left free meanwhile.

    The MongoDB ping blocks for up to ``--connect-timeout`` (a day at most). Called on the
    loop, it kept the loop from running its SIGINT and SIGTERM handlers: ctrl+c and kill did
    nothing to ``monque-tui paused mongodb://down-host/db`` until the timeout ran out, and
    then it reported "Cannot reach MongoDB", exit 3 (probe-cli). The ping runs in a daemon
    thread, so a stop cancels the wait at once and the exit does not wait for the ping.
    """
    await call_in_thread(functools.partial(check_url, url, connect_timeout=connect_timeout))


def _check_sqlite(url: str) -> None:
    try:
        location = locate_store(url)
    except (InvalidStoreUrlError, MonqueError, ValueError) as error:
        raise CliError(_masked(str(error), url), ExitCode.USAGE) from None
    path = Path(location.path or url.split("://", 1)[1].lstrip("/"))
    read_only = location.read_only
    parent = path.parent if str(path.parent) else Path(".")
    where = f"{mask_url(url)}:"
    if path.is_dir():
        raise CliError(
            f"{where} {path} is a directory; name a file inside it, e.g. {path / 'monque.db'}", ExitCode.STORE
        )
    special = special_file_kind(path)
    if special is not None:  # never opened to sniff: a FIFO would block here for ever
        raise CliError(
            f"{where} {path} is {special}, not a file; a SQLite store is a regular file (e.g. sqlite:///jobs.db)",
            ExitCode.STORE,
        )
    if not parent.exists():
        raise CliError(
            f"{where} directory {parent} does not exist; create it first (mkdir -p {parent})", ExitCode.STORE
        )
    if not parent.is_dir():
        raise CliError(f"{where} {parent} is not a directory", ExitCode.STORE)
    if read_only and not path.exists():
        raise CliError(
            f"{where} {path} does not exist, and a read-only open (--read-only, mode=ro) never "
            "creates a file; check the path",
            ExitCode.STORE,
        )
    if path.exists():
        if not os.access(path, os.R_OK):
            raise CliError(f"{where} cannot read {path}: permission denied", ExitCode.STORE)
        if not read_only and not os.access(path, os.W_OK):
            raise CliError(
                f"{where} cannot write {path}: permission denied (to look without writing: the console's "
                "--read-only, or ?mode=ro on the URL)",
                ExitCode.STORE,
            )
        try:
            with path.open("rb") as handle:
                head = handle.read(len(SQLITE_MAGIC))
        except OSError as error:
            raise CliError(f"{where} cannot read {path}: {error.strerror or error}", ExitCode.STORE) from None
        if head and head != SQLITE_MAGIC:
            raise CliError(f"{where} {path} is not a SQLite database; point the URL at another file", ExitCode.STORE)
    elif not os.access(parent, os.W_OK | os.X_OK):
        raise CliError(f"{where} cannot create {path}: directory {parent} is not writable", ExitCode.STORE)


@contextmanager
def stops_interrupt(doing: str) -> Iterator[None]:
    """While the block runs in the main thread, a stop signal raises ``StoppedBeforeStart``:
    "stopped before it started (SIGTERM while ``doing``)".

    What runs before any event loop (the ping of a server, for up to --connect-timeout; the
    import of an --app module) blocks the main thread: SIGTERM and SIGHUP then took their
    default action, and ``kill`` of a worker waiting on a down server (or importing a slow
    module) ended it with exit 143 and not a word in its log; Ctrl-C gave 130 in silence. The
    handler runs between bytecodes in the main thread, and a wait on a lock is interrupted by
    a signal, so the block stops at once. (Off the main thread, as in
    ``check_url_in_thread``, the caller's event loop hears the signals instead.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        raise StoppedBeforeStart(signum, f"stopped before it started ({name} while {doing})")

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, earlier in previous.items():
            signal.signal(sig, earlier)


#: How often the waiting thread wakes, so that a stop signal delivered to another thread of
#: the process (the ping's, the driver's) has its handler run here within this long.
STOP_CHECK_S = 0.05


def _on_daemon_thread(call: Callable[[], None]) -> None:
    """``call()`` on a daemon thread while this thread waits for it; its error raised here.

    A stop signal's handler (``stops_interrupt``) then raises in this wait, never inside the
    driver: raised in PyMongo's own frames it once cut a session object half-built, whose
    ``__del__`` printed "Exception ignored … AttributeError" under the one line at exit. The
    abandoned ping ends with the process."""
    failed: list[BaseException] = []
    done = threading.Event()

    def main() -> None:
        try:
            call()
        except BaseException as error:  # noqa: BLE001 - raised again in the waiting thread
            failed.append(error)
        finally:
            done.set()

    threading.Thread(target=main, name="monque-ping", daemon=True).start()
    while not done.wait(STOP_CHECK_S):
        pass  # a signal may land on another thread: this thread runs its handler once it wakes
    if failed:
        raise failed[0]


def _check_mongodb(url: str, connect_timeout: float) -> None:
    """Ping the server with a short timeout, so an unreachable cluster fails in seconds."""
    try:
        from pymongo import MongoClient
        from pymongo.errors import ConfigurationError, InvalidURI, PyMongoError
    except ImportError as error:  # pragma: no cover - pymongo is a dependency
        raise CliError(f"MongoDB URLs need PyMongo ({error})", ExitCode.STORE) from None
    try:  # the engine's own parse first: it names a bad option instead of letting the driver warn
        open_store(url)
    except (MonqueError, ValueError) as error:
        raise CliError(_masked(str(error), url), ExitCode.USAGE) from None
    timeout_ms = max(1, int(connect_timeout * 1000))

    def ping() -> None:
        client: MongoClient[dict[str, object]] | None = None
        try:
            client = MongoClient(url, serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms)
            client.admin.command("ping")
        finally:
            if client is not None:
                client.close()

    try:
        with stops_interrupt(f"reaching {mask_url(url)}"):
            _on_daemon_thread(ping)
    except (InvalidURI, ConfigurationError, ValueError) as error:
        if _is_srv_lookup(url, error):
            # A mongodb+srv:// host is looked up in DNS while the client is built, and PyMongo
            # says it failed as a ConfigurationError: that read "Invalid MongoDB URL", exit 2,
            # where the same host in a mongodb:// URL is "Cannot reach MongoDB", exit 3 (a
            # docs probe).
            raise CliError(
                f"Cannot reach MongoDB at {mask_url(url)}: its SRV record cannot be looked up "
                f"({_masked(_first_part(error), url)}); check the host name and this machine's DNS",
                ExitCode.STORE,
            ) from None
        raise CliError(
            f"Invalid MongoDB URL {mask_url(url)}: {_masked(_first_part(error), url)}", ExitCode.USAGE
        ) from None
    except OSError as error:
        # A TLS file the URL names (tlsCAFile, tlsCertificateKeyFile, tlsCRLFile) that is missing,
        # a directory or not PEM: PyMongo raises FileNotFoundError / ssl.SSLError while building
        # the client, which read "internal error: FileNotFoundError ..." (exit 1).
        raise CliError(
            f"MongoDB URL {mask_url(url)!r}: a TLS file it names cannot be used "
            f"({_masked(_first_part(error), url)}); point tlsCAFile / tlsCertificateKeyFile / tlsCRLFile "
            "at a readable PEM file",
            ExitCode.USAGE,
        ) from None
    except PyMongoError as error:
        raise CliError(
            f"Cannot reach MongoDB at {mask_url(url)} within {connect_timeout:g} s: "
            f"{_masked(_first_part(error), url)} (is the server running and the host reachable? "
            "--connect-timeout waits longer)",
            ExitCode.STORE,
        ) from None


#: What PyMongo's SRV lookup (dnspython) says when DNS gives no answer, in its own words.
_DNS_FAILURES = (
    "DNS query name does not exist",
    "resolution lifetime expired",
    "DNS operation timed out",
    "nameservers",
    "does not contain an answer",
)


def _is_srv_lookup(url: str, error: BaseException) -> bool:
    """A ``mongodb+srv://`` URL whose host DNS did not answer for: unreachable, not invalid."""
    return url.lower().startswith("mongodb+srv://") and any(words in str(error) for words in _DNS_FAILURES)


def _first_part(error: BaseException) -> str:
    """PyMongo's selection errors append a long topology dump; keep the reason only."""
    text = " ".join(str(error).split())
    for cut in (", Timeout:", ", Topology Description:"):
        if cut in text:
            text = text.split(cut, 1)[0]
    return text[:300]


def reject_read_only_for_workers(url: str, who: str) -> None:
    """In-process workers must write: a ``mode=ro`` URL with them is a usage error, said before any screen.

    Without this the console opened, drew its screen, and exited 1 ("setup failed") when
    the workers could not start.
    """
    try:
        store = open_store(url)
    except (MonqueError, ValueError):
        return  # check_url reports what is wrong with the URL itself
    if getattr(store, "read_only", False):
        raise CliError(
            f"{mask_url(url)} is opened read-only (mode=ro), but {who} runs its handlers in this process, and "
            "they claim and complete jobs; drop mode=ro (--read-only alone disables the console's keys)",
            ExitCode.USAGE,
        )
