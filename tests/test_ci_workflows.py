"""The MongoDB workflow (``.github/workflows/mongodb.yml``) cannot run here, so ``make lint``
checks its structure with ``.ci/check_workflows.py``. This holds that checker to its word:
the real file passes, and each thing the workflow must have, taken away, is reported."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / ".ci" / "check_workflows.py"
WORKFLOW = ROOT / ".github" / "workflows" / "mongodb.yml"


def checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_workflows", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_the_mongodb_workflow_passes_and_says_it_has_never_run() -> None:
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "mongodb.yml" in result.stdout
    assert "HAS NEVER RUN" in WORKFLOW.read_text(encoding="utf-8")


def _without_env(data: dict[Any, Any]) -> None:
    data["jobs"]["contract"].pop("env")


def _without_suite(data: dict[Any, Any]) -> None:
    steps = data["jobs"]["contract"]["steps"]
    data["jobs"]["contract"]["steps"] = [step for step in steps if "pytest" not in str(step.get("run", ""))]


def _without_replica_set(data: dict[Any, Any]) -> None:
    for step in data["jobs"]["contract"]["steps"]:
        if "run" in step:
            step["run"] = step["run"].replace("--replSet rs0", "")


def _without_steps(data: dict[Any, Any]) -> None:
    data["jobs"]["contract"]["steps"] = []


@pytest.mark.parametrize(
    ("break_it", "said"),
    [
        (_without_env, "MONQUE_TEST_MONGODB_URI"),
        (_without_suite, "no job runs the contract suite"),
        (_without_replica_set, "starts no replica set"),
        (_without_steps, "has no steps"),
    ],
)
def test_each_missing_part_is_reported(tmp_path: Path, break_it: Any, said: str) -> None:
    data = workflow()
    break_it(data)
    broken = tmp_path / "mongodb.yml"
    broken.write_text(yaml.safe_dump(data), encoding="utf-8")
    problems = checker().problems_of(broken)
    assert any(said in problem for problem in problems), problems


def test_a_file_that_is_not_yaml_is_reported(tmp_path: Path) -> None:
    broken = tmp_path / "mongodb.yml"
    broken.write_text("jobs:\n  contract: [unclosed\n", encoding="utf-8")
    result = subprocess.run([sys.executable, str(SCRIPT), str(broken)], capture_output=True, text=True, check=False)
    assert result.returncode == 1 and "not valid YAML" in result.stderr
