"""Each scheduler service, and metrics.py, holds only its store port(s), never the whole store
(issue 35, ADR 0018).

The ``Monque`` facade (scheduler/monque.py) holds the composite ``JobStore`` and hands each
service its port from store/ports.py. A service may import from the store only ``ports``,
``values`` (plain selectors, filters, step counts) and ``guards`` (which statuses each
action may touch, shared with the backends), and may name a store type only as
``ports.<Port>``. So a service cannot hold the whole store under another name either: a
renamed composite is still imported from somewhere else than those modules, or is not
one of the port names. mypy then keeps each service to the methods its port declares.
The import-linter contract ``services-hold-ports`` checks the modules; this checks names.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import monque_engine
from monque_engine.store import ports
from monque_engine.store.base import JobStore

ENGINE = Path(monque_engine.__file__).parent
FACADE = ENGINE / "scheduler" / "monque.py"
HOLDERS = [*sorted(path for path in (ENGINE / "scheduler").glob("*.py") if path != FACADE), ENGINE / "metrics.py"]
ALLOWED_MODULES = {"monque_engine.store.ports", "monque_engine.store.values", "monque_engine.store.guards"}
STORE_CLASSES = {"JobStore", "SqliteStore", "MongoStore"}


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ENGINE.parent).with_suffix("").parts)


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".")[: -node.level]
    return ".".join([*package, *([node.module] if node.module else [])])


def _annotations(tree: ast.AST) -> list[ast.expr]:
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            found.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            found.append(node.returns)
    return found


def store_violations(source: str, module: str) -> list[str]:
    """What in ``source`` (the module ``module``) holds more of the store than a port."""
    tree = ast.parse(source)
    trees: list[ast.AST] = [tree]
    for annotation in _annotations(tree):  # "JobStore" in quotes is a type all the same
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            trees.append(ast.parse(annotation.value, mode="eval"))
    problems: list[str] = []
    for part in trees:
        for node in ast.walk(part):
            if isinstance(node, ast.ImportFrom):
                target = _absolute(module, node)
                if target == "monque_engine.store":
                    imported = {f"{target}.{alias.name}" for alias in node.names}
                    problems += [f"imports {name}" for name in sorted(imported - ALLOWED_MODULES)]
                elif target.startswith("monque_engine.store.") and target not in ALLOWED_MODULES:
                    problems.append(f"imports from {target}")
            elif isinstance(node, ast.Import):
                problems += [
                    f"imports {alias.name}"
                    for alias in node.names
                    if alias.name.startswith("monque_engine.store") and alias.name not in ALLOWED_MODULES
                ]
            elif isinstance(node, ast.Name) and node.id in STORE_CLASSES:
                problems.append(f"names {node.id}")
            elif isinstance(node, ast.Attribute):
                if node.attr in STORE_CLASSES:
                    problems.append(f"names {node.attr}")
                elif isinstance(node.value, ast.Name) and node.value.id == "ports" and node.attr not in ports.PORTS:
                    problems.append(f"names ports.{node.attr}, which is not a port")
    return problems


@pytest.mark.parametrize("path", HOLDERS, ids=lambda path: path.name)
def test_a_service_holds_only_store_ports(path: Path) -> None:
    assert store_violations(path.read_text(), _module_name(path)) == []


@pytest.mark.parametrize(
    "source",
    [
        "from ..store.base import JobStore",
        "from ..store.base import JobStore as Store",  # renaming does not count
        "from ..store import JobStore",
        "from ..store import base",
        "from monque_engine.store.sqlite import SqliteStore",
        "import monque_engine.store.mongo.store",
        "from ..store.composite import Everything",  # a whole store under a new name and module
        "def f(store: 'JobStore') -> None: ...",
        "class S:\n    def __init__(self, store: 'store_module.JobStore') -> None: ...",
        "from ..store import ports\nstore: ports.Store",  # not one of the ports
        "from ..store import ports\ndef f() -> 'ports.AllOfThem': ...",
    ],
)
def test_the_check_catches_a_service_holding_the_whole_store(source: str) -> None:
    """The check above must fail for each way of holding the whole store (it did, on main)."""
    assert store_violations(source, "monque_engine.scheduler.example") != []


def test_the_check_passes_ports_and_values() -> None:
    source = (
        "from ..store import ports\n"
        "from ..store.values import StoreSelector\n"
        "def f(store: ports.Claims, reads: 'ports.Reads', selector: StoreSelector) -> None: ...\n"
    )
    assert store_violations(source, "monque_engine.scheduler.example") == []


def test_ports_are_small_and_the_store_is_exactly_their_composite() -> None:
    """Each port is its own Protocol (none extends another, so none is the whole store by
    inheritance), and every method a backend implements is declared by exactly one port:
    the table ADR 0018 maps, which is where a backend's modules are cut."""
    declared: dict[str, list[str]] = {}
    for name in ports.PORTS:
        port = getattr(ports, name)
        assert port.__bases__ == (ports.Protocol,), f"{name} extends {port.__bases__}"
        members = [member for member in vars(port) if not member.startswith("_")]
        assert 0 < len(members) <= 15, f"{name} has {len(members)} members"
        for member in members:
            declared.setdefault(member, []).append(name)
    assert {base.__name__ for base in JobStore.__bases__} - {"ABC"} == set(ports.PORTS)
    twice = {member: where for member, where in declared.items() if len(where) > 1}
    assert twice == {}
    own = {
        name
        for name, value in vars(JobStore).items()
        if not name.startswith("_") and (inspect.isfunction(value) or isinstance(value, classmethod | staticmethod))
    }
    # Before a store exists (classmethods / staticmethods), and Reads' one default that spans ports.
    assert own == {"from_url", "check_collection_name", "locate", "count_in_steps"}
