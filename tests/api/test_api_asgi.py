"""``management_app`` mounted in a real Starlette application (issue 39), driven by
Starlette's test client: the Monque opened in the app's lifespan, the API under a mount
point, ``authorize(action, request)`` reading the request through Starlette's own
``Request``, and the other routes of the app untouched. FastAPI mounts the same way
(``app.mount``: FastAPI is Starlette's subclass)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from api_support import check_response
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from monque_engine import Monque
from monque_engine.management import ApiRequest, ApiResponse, management_app


def _app(url: str, *, read_only: bool = False) -> Starlette:
    monque = Monque(url, recover_stale_jobs=False)
    seen: list[str] = []

    def authorize(action: str, request: ApiRequest) -> bool:
        role = Request(request.native).headers.get("x-role")  # Starlette's own view of the scope
        seen.append(action)
        return role == "admin" or (role == "viewer" and action == "read")

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await monque.initialize()
        for n in range(3):
            await monque.enqueue("email", {"n": n})
        yield
        await monque.close()

    async def home(request: Request) -> PlainTextResponse:
        return PlainTextResponse("the app's own page")

    app = Starlette(
        routes=[
            Route("/", home),
            Mount("/monque", app=management_app(monque, read_only=read_only, authorize=authorize)),
        ],
        lifespan=lifespan,
    )
    app.state.seen = seen
    return app


def _checked(client: TestClient, method: str, path: str, **kwargs: Any) -> Any:
    response = client.request(method, "/monque" + path, **kwargs)
    assert response.headers["content-type"] == "application/json"
    check_response(method, path.partition("?")[0], ApiResponse(response.status_code, response.json()))
    return response


def test_mounted_in_starlette(tmp_path: Path) -> None:
    app = _app(f"sqlite:///{tmp_path / 'jobs.db'}")
    admin, viewer = {"x-role": "admin"}, {"x-role": "viewer"}
    with TestClient(app) as client:
        assert client.get("/").text == "the app's own page"
        page = _checked(client, "GET", "/api/v1/jobs?limit=2", headers=viewer).json()
        assert len(page["jobs"]) == 2 and page["hasNextPage"] is True
        second = _checked(client, "GET", "/api/v1/jobs", params={"cursor": page["cursor"]}, headers=viewer).json()
        assert len(second["jobs"]) == 1
        job_id = page["jobs"][0]["id"]
        refused = _checked(client, "DELETE", f"/api/v1/jobs/{job_id}", headers=viewer)
        assert (refused.status_code, refused.json()) == (403, {"error": "Action denied"})
        assert _checked(client, "GET", "/api/v1/jobs").status_code == 403  # no role: no read either
        assert _checked(client, "DELETE", f"/api/v1/jobs/{job_id}", headers=admin).json() == {"deleted": True}
        bad = _checked(client, "POST", "/api/v1/jobs/actions/retry", content=b"{oops", headers=admin)
        assert bad.status_code == 400 and "not JSON" in bad.json()["error"]
        big = client.post("/monque/api/v1/jobs/actions/retry", content=b"{" + b" " * 70_000 + b"}", headers=admin)
        assert big.status_code == 400 and "larger than 65536" in big.json()["error"]
        counted = _checked(client, "POST", "/api/x/v1/jobs/actions/delete/count", json={"name": "email"}, headers=admin)
        assert counted.json()["count"] == 2
        done = _checked(
            client,
            "POST",
            "/api/x/v1/jobs/actions/delete",
            json={"name": "email", "asOf": counted.json()["asOf"]},
            headers=admin,
        )
        assert done.json() == {"count": 2, "errors": []}
        assert _checked(client, "GET", "/api/v1/jobs/stats", headers=viewer).json()["total"] == 0
        assert _checked(client, "GET", "/api/v2/nothing", headers=viewer).status_code == 404
    assert {"read", "delete", "deleteBulk"} <= set(app.state.seen)


def test_read_only_mount(tmp_path: Path) -> None:
    app = _app(f"sqlite:///{tmp_path / 'jobs.db'}", read_only=True)
    with TestClient(app) as client:
        refused = _checked(client, "POST", "/api/v1/jobs/actions/delete", json={}, headers={"x-role": "admin"})
        assert (refused.status_code, refused.json()) == (403, {"error": "Management surface is read-only"})
        assert _checked(client, "GET", "/api/v1/jobs/stats", headers={"x-role": "admin"}).json()["total"] == 3
    assert "deleteBulk" not in app.state.seen  # refused before the hook was asked


async def test_a_client_gone_mid_body_runs_nothing(tmp_path: Path) -> None:
    """ASGI's ``http.disconnect`` before the body's end: the request is not handled as one
    with an empty body (a single-job action takes one), and nothing is sent."""
    from monque_engine.management.asgi import management_app as app_of

    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}", recover_stale_jobs=False) as monque:
        job = await monque.enqueue("email", {})
        messages = [{"type": "http.request", "body": b"{", "more_body": True}, {"type": "http.disconnect"}]
        sent: list[Any] = []

        async def receive() -> Any:
            return messages.pop(0)

        async def send(message: Any) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": f"/api/v1/jobs/{job.id}/actions/cancel", "headers": []}
        await app_of(monque)(scope, receive, send)
        assert sent == [] and messages == []
        again = await monque.get_job(job.id)
        assert again is not None and str(again.status) == "pending"
