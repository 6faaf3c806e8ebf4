"""The contract suite is grouped by store port (issue 35 item 7, ADR 0018).

Every file under tests/contract/ sits in a folder named after one port of
``monque_engine/store/ports.py`` (``tests/contract/<port>/test_*.py``), and every port has at
least one contract test file, so "where is retry?" ends in one place: the Management
port's folder. A new port without contract tests, a folder named after no port, or a
contract file left at the top of tests/ fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

from monque_engine.store import ports

TESTS = Path(__file__).parent
CONTRACT = TESTS / "contract"
PORT_FOLDERS = {name.lower() for name in ports.PORTS}


def _has_a_test(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_") for node in tree.body
    )


def layout_problems(tests: Path) -> list[str]:
    """What in ``tests`` breaks the one-folder-per-port layout of the contract suite."""
    contract = tests / "contract"
    problems = [
        f"{path.relative_to(tests)}: contract tests live in contract/<port>/, not at the top of tests/"
        for path in sorted(tests.glob("test_contract_*.py"))
    ]
    for path in sorted(contract.rglob("*")):
        if "__pycache__" in path.parts or path.is_dir():
            continue
        relative = path.relative_to(contract)
        if len(relative.parts) != 2 or relative.parts[0] not in PORT_FOLDERS:
            problems.append(
                f"contract/{relative}: not in a folder named after a port ({', '.join(sorted(PORT_FOLDERS))})"
            )
        elif not (path.name.startswith("test_") and path.suffix == ".py"):
            problems.append(f"contract/{relative}: only test_*.py files belong in a port's folder")
    for port in sorted(PORT_FOLDERS):
        if not any(_has_a_test(path) for path in (contract / port).glob("test_*.py")):
            problems.append(f"contract/{port}/: the {port} port has no contract test file")
    return problems


def test_every_contract_file_is_in_a_port_folder_and_every_port_has_one() -> None:
    assert layout_problems(TESTS) == []


def test_the_port_folders_are_the_ports_of_the_store() -> None:
    assert {path.name for path in CONTRACT.iterdir() if path.is_dir() and path.name != "__pycache__"} == PORT_FOLDERS


def test_misplaced_files_and_a_port_without_tests_are_reported(tmp_path: Path) -> None:
    for port in PORT_FOLDERS - {"retention"}:
        (tmp_path / "contract" / port).mkdir(parents=True)
        (tmp_path / "contract" / port / "test_x.py").write_text("def test_x():\n    pass\n", encoding="utf-8")
    (tmp_path / "contract" / "retention").mkdir()
    (tmp_path / "contract" / "retention" / "test_empty.py").write_text('"""No test here."""\n', encoding="utf-8")
    (tmp_path / "contract" / "queries").mkdir()
    (tmp_path / "contract" / "queries" / "test_listing.py").write_text("", encoding="utf-8")
    (tmp_path / "contract" / "test_loose.py").write_text("", encoding="utf-8")
    (tmp_path / "contract" / "reads" / "helpers.py").write_text("", encoding="utf-8")
    (tmp_path / "test_contract_retry.py").write_text("", encoding="utf-8")
    assert layout_problems(tmp_path) == [
        "test_contract_retry.py: contract tests live in contract/<port>/, not at the top of tests/",
        f"contract/queries/test_listing.py: not in a folder named after a port ({', '.join(sorted(PORT_FOLDERS))})",
        "contract/reads/helpers.py: only test_*.py files belong in a port's folder",
        f"contract/test_loose.py: not in a folder named after a port ({', '.join(sorted(PORT_FOLDERS))})",
        "contract/retention/: the retention port has no contract test file",
    ]
