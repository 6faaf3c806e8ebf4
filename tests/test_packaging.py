"""Packaging metadata: one version string, an SPDX licence, typed engine, bounded dependencies.

These are the fast checks that run in ``make test`` against the installed (editable)
distribution. The slow, end-to-end check (build the sdist and wheel, install the wheel into
a fresh venv, run the command from outside the tree) is ``.ci/package-smoke``, which
``.ci/run`` calls after ``make test``.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import distribution
from pathlib import Path

from packaging.requirements import Requirement

import monque_engine

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]


def test_the_version_is_written_once_in_the_engine() -> None:
    # setuptools reads monque_engine.__version__ for the distribution's version: no second copy.
    assert "version" not in PROJECT
    assert "version" in PROJECT["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "monque_engine.version.__version__"}


def test_installed_metadata_agrees_with_the_engine() -> None:
    installed = distribution("monque-tui").version
    assert installed == monque_engine.__version__, (
        f"installed metadata says {installed}, monque_engine.__version__ says {monque_engine.__version__}: "
        "reinstall (`.venv/bin/pip install -e .`) after changing the version"
    )


def test_version_flag_prints_the_one_version() -> None:
    script = Path(sys.executable).with_name("monque-tui")
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    version = monque_engine.__version__
    assert result.stdout.startswith(f"monque-tui {version} (monque_engine {version}, Python "), result.stdout


def test_licence_is_an_spdx_expression_with_its_file() -> None:
    assert PROJECT["license"] == "MIT"
    assert PROJECT["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")
    # SPDX strings need setuptools >= 77; an older backend would reject the metadata.
    assert "setuptools>=77" in PYPROJECT["build-system"]["requires"][0]


def test_engine_is_marked_typed_and_the_marker_ships() -> None:
    assert (Path(monque_engine.__file__).parent / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["monque_engine"]


def test_runtime_dependencies_have_an_upper_bound_that_admits_the_tested_version() -> None:
    for text in PROJECT["dependencies"]:
        requirement = Requirement(text)
        assert any(spec.operator == "<" for spec in requirement.specifier), f"{text}: no upper bound"
        tested = distribution(requirement.name).version
        assert requirement.specifier.contains(tested), f"{text} excludes the installed, tested {tested}"


def test_changelog_starts_with_this_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    released = [line for line in changelog.splitlines() if line.startswith("## [") and "Unreleased" not in line]
    assert released, "CHANGELOG.md has no release section"
    assert released[0].startswith(f"## [{monque_engine.__version__}] - "), released[0]
