"""``monque-tui migrate`` as a real process against the scripted wire server, whose
``createIndexes`` answers later than the URL's socket timeout (issue 36, defect 1).

DRIVER LEVEL, end to end: the command's own client and build client over a loopback
socket; the server runs in this test's event loop while the child runs. It proves the
command finishes and reports every index, not how long a build takes on a server.
"""

from __future__ import annotations

import asyncio
import os
import sys

from monque_engine.store.mongo.indexes import index_models
from wire import Delay, Request, WireServer
from wire.backend import MongomockBackend
from wire.store import JOBS, script_collection

GUARD_S = 60.0  # a hang guard, not a timing threshold


async def test_migrate_finishes_a_build_longer_than_the_socket_timeout(wire_server: WireServer) -> None:
    script = script_collection(wire_server, documents=10_000_000, present=[])
    MongomockBackend().serve(wire_server)  # stale recovery and the instance-id check at open

    def build(request: Request) -> object:
        reply = script.create_indexes(request)
        return Delay(0.5, reply) if request["createIndexes"] == JOBS else reply

    wire_server.handle("createIndexes", build)  # type: ignore[arg-type]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MONQUE_")}
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "monque_tui",
        "migrate",
        wire_server.url(socketTimeoutMS=100),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(GUARD_S):
        out, err = await child.communicate()
    names = [str(m.document["name"]) for m in index_models(False)]
    assert child.returncode == 0, err.decode()
    assert f"{len(names)} index(es) built" in out.decode()
    lines = err.decode().splitlines()
    assert sum(": building" in line for line in lines) == len(names)
    assert sum(f"(one build of {len(names)} indexes)" in line for line in lines) == len(names)
    builds = [r for r in wire_server.commands("createIndexes") if r["createIndexes"] == JOBS]
    assert len(builds) == 1
