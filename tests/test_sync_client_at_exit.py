"""``SyncMonque`` at interpreter exit: in ``atexit`` handlers, and its own close there.

Python joins its non-daemon threads and shuts ``concurrent.futures`` down *before* it runs
the ``atexit`` handlers, so anything that reaches ``asyncio.to_thread`` then fails with
"cannot schedule new futures after shutdown". A SQLite store used it to open and to close:
a client opened in an application's exit handler failed with that text, and the clients
that ``monque_engine`` closes at exit left their connections open (and the ``-wal`` file
behind). Each case runs in a real interpreter that really exits.
"""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path


def _run(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), f"sqlite:///{tmp_path / 'jobs.db'}"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _names(tmp_path: Path) -> list[str]:
    conn = sqlite3.connect(tmp_path / "jobs.db")
    try:
        return [row[0] for row in conn.execute("SELECT name FROM monque_jobs ORDER BY name")]
    finally:
        conn.close()


def test_a_client_first_used_in_an_atexit_handler_opens_and_enqueues(tmp_path: Path) -> None:
    answer = _run(
        """
        import atexit, sys
        from monque_engine import SyncMonque

        def at_exit():
            client = SyncMonque(sys.argv[1])
            client.enqueue("at-exit")
            print("stored", client.count_jobs())

        atexit.register(at_exit)
        SyncMonque(sys.argv[1]).enqueue("before")
        """,
        tmp_path,
    )
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout.strip() == "stored 2", answer.stderr
    assert "Traceback" not in answer.stderr, answer.stderr
    assert _names(tmp_path) == ["at-exit", "before"]


def test_interpreter_exit_closes_the_stores_connections(tmp_path: Path) -> None:
    """The last connection to a WAL file checkpoints it and removes the ``-wal`` file: left
    behind, it says a connection was never closed."""
    answer = _run(
        """
        import sys
        from monque_engine import SyncMonque

        client = SyncMonque(sys.argv[1])
        for i in range(100):
            client.enqueue("exit", {"i": i})
        # no close(): interpreter exit closes it
        """,
        tmp_path,
    )
    assert answer.returncode == 0, answer.stderr
    # Looked at before reading the file here: opening it makes a -wal file again.
    assert not (tmp_path / "jobs.db-wal").exists(), "the store's connections were left open at exit"
    assert _names(tmp_path) == ["exit"] * 100


def test_a_call_after_exit_closed_the_clients_is_a_clear_error(tmp_path: Path) -> None:
    """An exit handler registered before ``monque_engine`` was imported runs after the
    engine closed its clients: a one-line ``ConnectionError``, not asyncio's "Event loop is
    closed" and a never-awaited coroutine warning."""
    answer = _run(
        """
        import atexit, sys

        def at_exit():
            try:
                client.count_jobs()
            except Exception as error:
                print(type(error).__name__, error)

        atexit.register(at_exit)
        from monque_engine import SyncMonque

        client = SyncMonque(sys.argv[1])
        client.enqueue("before")
        """,
        tmp_path,
    )
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout.startswith("ConnectionError "), answer.stdout
    assert "interpreter exit" in answer.stdout, answer.stdout
    assert "never awaited" not in answer.stderr, answer.stderr


def test_a_mongodb_client_first_used_in_an_atexit_handler_reaches_its_server() -> None:
    """PyMongo looks a server's name up on the loop's default executor, and a new thread pool
    cannot start at exit: a ``SyncMonque`` on MongoDB first used in an exit handler failed
    with "Cannot reach MongoDB …: can't register atexit after shutdown", whatever the
    server's state, without trying. Its loop's executor starts a daemon thread per call now.
    No server is needed to see the difference: a listening socket that accepts and never
    answers stands in for it, and accepting proves the name was looked up and the server
    reached from the exit handler."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(60)
        url = f"mongodb://localhost:{server.getsockname()[1]}/app?directConnection=true&serverSelectionTimeoutMS=2000"
        child = subprocess.Popen(
            [sys.executable, "-W", "error::DeprecationWarning", "-c", textwrap.dedent(AT_EXIT_MONGODB), url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            connection, _ = server.accept()  # fails (timeout) if the handler never reached the server
            connection.close()
            out, err = child.communicate(timeout=120)
        finally:
            child.kill()
    assert child.returncode == 0, err
    assert out.startswith("ConnectionError: "), (out, err)  # the server never answered: said as such
    assert "atexit" not in out and "Traceback" not in err, (out, err)


AT_EXIT_MONGODB = """
    import atexit, sys
    from monque_engine import ConnectionError, SyncMonque

    def at_exit():
        try:
            SyncMonque(sys.argv[1]).enqueue("at-exit")
        except ConnectionError as error:
            print(f"ConnectionError: {error}")

    atexit.register(at_exit)
    """


def test_a_handler_registered_after_the_import_runs_before_the_clients_close(tmp_path: Path) -> None:
    """The docs promise it for a handler registered after ``import monque_engine``; the
    clients' own handler was registered only when the sync client first loaded, later, so it
    ran first and the application's handler met closed clients (a probe of the Python API)."""
    answer = _run(
        """
        import atexit, sys
        import monque_engine

        def at_exit():
            client = monque_engine.SyncMonque(sys.argv[1])
            client.enqueue("at-exit")
            print("stored", client.count_jobs())

        atexit.register(at_exit)
        client = monque_engine.SyncMonque(sys.argv[1])  # first used after the handler was registered
        client.enqueue("before")
        """,
        tmp_path,
    )
    assert answer.returncode == 0, answer.stderr
    assert "stored 2" in answer.stdout and "Error" not in answer.stderr, answer.stderr
    assert _names(tmp_path) == ["at-exit", "before"]
