"""The header says when counts and listings come from a MongoDB secondary, and how far
behind it is (issue 27 item 3). The console runs on a real SQLite store here (no MongoDB
server exists); the store's two MongoDB hooks (``display_read_preference`` and
``display_staleness_s``, tested against PyMongo's own server descriptions in
tests/test_mongo_display_reads.py) are set on it, as ``MongoStore`` has them."""

from __future__ import annotations

from monque_tui.cli.entry import main
from monque_tui.console.widgets.console_header import ConsoleHeader

from .conftest import running_console, wait_for


async def test_the_header_shows_secondary_reads_and_their_lag(seeded_url: str) -> None:
    async with running_console(seeded_url) as (app, _pilot):
        header = app.jobs_screen.query_one(ConsoleHeader)
        await wait_for(lambda: app.session.stats is not None)
        assert "reads:" not in header.render().plain  # the primary: nothing to say
        store = app.session.monque.store  # type: ignore[union-attr]
        lag = [23.4]
        store.display_read_preference = "secondaryPreferred"  # type: ignore[attr-defined]
        store.display_staleness_s = lambda: lag[0]  # type: ignore[attr-defined]
        await app.session.refresh_stats()
        await wait_for(lambda: "reads: secondary, ~23 s behind" in header.render().plain)
        lag[0] = None  # type: ignore[call-overload]
        await app.session.refresh_stats()
        await wait_for(lambda: "reads: primary (no secondary up)" in header.render().plain)


def test_read_preference_on_sqlite_is_a_usage_error(tmp_path: object, capsys: object) -> None:
    code = main([f"sqlite:///{tmp_path}/jobs.db", "--read-preference", "secondaryPreferred"])
    assert code == 2
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert "--read-preference applies to a MongoDB store" in err and "Traceback" not in err
    assert main([f"sqlite:///{tmp_path}/jobs.db", "--read-preference", "nearest"]) == 2
