"""The job ``enqueue`` returns holds what was stored, not the caller's containers. It shared
them, so ``d['a'].append(2)`` after the call showed ``{'a': [1, 2]}`` on the returned job
while the store held ``{'a': [1]}`` (a data probe), against engine.md's "what is stored is
what every read gets, the job enqueue returns included". Real SQLite store."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from monque_engine import Monque


@pytest.mark.parametrize("data", [{"a": [1]}, {"to": "ada@example.com", "n": 5}, [{"k": 1}], {"deep": {"k": 1}}])
async def test_changing_the_payload_after_enqueue_changes_neither_the_job_nor_the_store(
    tmp_path: Path, data: Any
) -> None:
    async with Monque(f"sqlite:///{tmp_path / 'jobs.db'}", recover_stale_jobs=False) as monque:
        sent: Any = copy.deepcopy(data)
        job = await monque.enqueue("x", sent)
        [many] = await monque.enqueue_many([{"name": "x", "data": sent}])
        if isinstance(sent, dict):
            sent["added"] = True
            for value in sent.values():
                if isinstance(value, list):
                    value.append(2)
                if isinstance(value, dict):
                    value["added"] = True
        else:
            sent.append("added")
            sent[0]["added"] = True
        assert job.data == data and many.data == data
        assert (await monque.get_job(job.id)).data == data  # type: ignore[union-attr]
