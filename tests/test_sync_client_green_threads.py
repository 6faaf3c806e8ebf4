"""``SyncMonque`` under gevent (``gunicorn -k gevent``). Its "threads" are greenlets of one
OS thread: with three or more enqueuing at once, the followers of a shared commit slept in
``os.eventfd_read``, a system call gevent cannot switch away from, and the whole process
stopped, the leader that would have woken them included (a probe: 31 WORKER TIMEOUTs under
gunicorn). Real gevent, monkey-patched, in a process of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from monque_engine import SyncMonque

PRODUCERS = """
from gevent import monkey

monkey.patch_all()
import faulthandler

import gevent

from monque_engine import SyncMonque

faulthandler.dump_traceback_later(60, exit=True)  # a hang ends the process with its stacks
client = SyncMonque({url!r})
done = []


def producer(index):
    for number in range(100):
        done.append(client.enqueue("green.job", {{"producer": index, "number": number}}).id)


gevent.joinall([gevent.spawn(producer, index) for index in range(8)])
print("enqueued", len(done), len(set(done)))
client.close()
"""


def test_eight_greenlets_enqueue_at_once_under_gevent(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'green.db'}"
    done = subprocess.run(
        [sys.executable, "-c", PRODUCERS.format(url=url)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "enqueued 800 800", done.stdout + done.stderr
    with SyncMonque(url) as client:
        assert client.count_jobs() == 800
