#!/usr/bin/env python3
"""Check the GitHub Actions workflows that cannot run here: they parse, and have the shape they need.

``.github/workflows/mongodb.yml`` runs the contract suite on a real MongoDB replica set. No
runner and no ``mongod`` exist where this project is built, so the file would otherwise be
read by nobody until its first run. ``make lint`` runs this script: every workflow must parse
as YAML and have ``on``, and jobs each with ``runs-on`` and steps that ``run`` or ``uses``
something; the MongoDB workflow must also start a replica set (``--replSet`` and
``rs.initiate``), set ``MONQUE_TEST_MONGODB_URI`` (to a ``mongodb://`` URL naming that
replica set) and run the contract suite (``pytest tests/contract``) with it.

Usage: ``python .ci/check_workflows.py [FILE...]`` (default: every workflow); prints one line
per problem and exits 1 if there is any.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
MONGODB_WORKFLOW = "mongodb.yml"
ENV = "MONQUE_TEST_MONGODB_URI"


def _steps(job: dict[str, Any]) -> list[Any]:
    steps = job.get("steps")
    return steps if isinstance(steps, list) else []


def structure_problems(data: Any) -> list[str]:
    """What every workflow needs: a trigger, and jobs whose steps each run or use something."""
    if not isinstance(data, dict):
        return ["not a mapping at the top level"]
    problems = []
    # YAML 1.1 (PyYAML) reads the bare key `on` as the boolean True.
    if "on" not in data and True not in data:
        problems.append("no `on:` trigger")
    jobs = data.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        return [*problems, "no `jobs:`"]
    for name, job in jobs.items():
        if not isinstance(job, dict):
            problems.append(f"job {name!r} is not a mapping")
            continue
        if "runs-on" not in job:
            problems.append(f"job {name!r} has no `runs-on`")
        steps = _steps(job)
        if not steps:
            problems.append(f"job {name!r} has no steps")
        for number, step in enumerate(steps, 1):
            if not isinstance(step, dict) or not ({"run", "uses"} & set(step)):
                problems.append(f"job {name!r} step {number} neither runs nor uses anything")
    return problems


def mongodb_problems(data: Any) -> list[str]:
    """What the MongoDB workflow needs besides: a replica set, the variable, the contract suite."""
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), dict):
        return []
    found_suite = False
    for name, job in data["jobs"].items():
        if not isinstance(job, dict):
            continue
        runs = "\n".join(str(step.get("run", "")) for step in _steps(job) if isinstance(step, dict))
        env: dict[str, Any] = dict(job.get("env") or {})
        for step in _steps(job):
            if isinstance(step, dict) and "pytest" in str(step.get("run", "")):
                env.update(step.get("env") or {})
        if "pytest" not in runs or "tests/contract" not in runs:
            continue
        found_suite = True
        uri = str(env.get(ENV, ""))
        if not uri.startswith("mongodb://") or "replicaSet=" not in uri:
            return [f"job {name!r} runs the contract suite without {ENV} set to a mongodb:// URL with replicaSet="]
        if "--replSet" not in runs or "rs.initiate" not in runs:
            return [f"job {name!r} starts no replica set (mongod --replSet ... and rs.initiate())"]
    return [] if found_suite else ["no job runs the contract suite (pytest tests/contract)"]


def problems_of(path: Path) -> list[str]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        return [f"not valid YAML: {' '.join(str(error).split())}"]
    problems = structure_problems(data)
    if path.name == MONGODB_WORKFLOW:
        problems += mongodb_problems(data)
    return problems


def main(argv: list[str]) -> int:
    paths = [Path(arg) for arg in argv] or sorted(WORKFLOWS.glob("*.yml"))
    if not argv and not (WORKFLOWS / MONGODB_WORKFLOW).exists():
        print(f"{WORKFLOWS / MONGODB_WORKFLOW}: missing", file=sys.stderr)
        return 1
    failed = False
    for path in paths:
        for problem in problems_of(path):
            failed = True
            print(f"{path}: {problem}", file=sys.stderr)
    if not failed:
        print(f"workflows ok: {', '.join(path.name for path in paths)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
