"""No import circle anywhere in the house: ``monque_engine``, ``monque_tui`` and ``bench``.

Two modules that import each other (directly or through others) cannot be read, tested or
moved one at a time; issue 35 found ``bench/reliability.py`` ↔ ``bench/reliability_fuzz.py``
and ``monque_engine/metrics.py`` ↔ ``scheduler/monque.py``. Every import counts, lazy ones
inside functions and ``TYPE_CHECKING`` ones included, as grimp (import-linter's engine) sees
them: a circle hidden in a function is still a circle to the reader.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("monque_engine", "monque_tui", "bench")

#: Circles known and being removed elsewhere, each with who removes it. An entry whose circle
#: is gone fails the test below, so the list only shrinks.
KNOWN_CIRCLES: dict[frozenset[str], str] = {}


def circles(graph: grimp.ImportGraph) -> list[frozenset[str]]:
    """The graph's strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    #: The depth-first path: each module with the imports it has yet to follow.
    work: list[tuple[str, Iterable[str]]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        work.append((module, iter(sorted(graph.find_modules_directly_imported_by(module)))))

    for root in sorted(graph.modules):
        if root in index:
            continue
        visit(root)
        while work:
            module, edges = work[-1]
            advanced = False
            for imported in edges:
                if imported not in index:
                    visit(imported)
                    advanced = True
                    break
                if imported in on_stack:
                    low[module] = min(low[module], index[imported])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def describe(graph: grimp.ImportGraph, circle: frozenset[str]) -> str:
    """Each import inside the circle, with its line: where to cut."""
    lines = []
    for importer in sorted(circle):
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & circle):
            for detail in graph.get_import_details(importer=importer, imported=imported):
                lines.append(f"  {importer}:{detail['line_number']}  {detail['line_contents']}")
    return "\n".join(lines)


def house_graph() -> grimp.ImportGraph:
    if str(ROOT) not in sys.path:  # bench is a top-level package of the checkout, not installed
        sys.path.insert(0, str(ROOT))
    return grimp.build_graph(*PACKAGES, include_external_packages=False, cache_dir=None)


def test_no_import_circle_in_the_house() -> None:
    graph = house_graph()
    assert {module.split(".")[0] for module in graph.modules} == set(PACKAGES)
    new = [circle for circle in circles(graph) if circle not in KNOWN_CIRCLES]
    assert not new, "import circles (cut one import of each, e.g. move what both need below both):\n" + "\n\n".join(
        describe(graph, circle) for circle in new
    )


def test_every_known_circle_still_exists() -> None:
    """A known circle that is gone leaves the list (or it would excuse its return)."""
    present = set(circles(house_graph()))
    gone = [name for circle, name in KNOWN_CIRCLES.items() if circle not in present]
    assert not gone, f"these circles are gone: delete their KNOWN_CIRCLES entries: {gone}"


def test_the_search_finds_a_circle_through_a_third_module_and_a_lazy_import() -> None:
    """Not vacuous: a three-module circle is found whole, and a module outside it is not in it."""
    graph = grimp.ImportGraph()
    for module in ("pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d"):
        graph.add_module(module)
    graph.add_import(importer="pkg.a", imported="pkg.b", line_number=1, line_contents="from . import b")
    graph.add_import(importer="pkg.b", imported="pkg.c", line_number=1, line_contents="from . import c")
    graph.add_import(importer="pkg.c", imported="pkg.a", line_number=9, line_contents="from . import a  # in a def")
    graph.add_import(importer="pkg.d", imported="pkg.a", line_number=1, line_contents="from . import a")
    assert circles(graph) == [frozenset({"pkg.a", "pkg.b", "pkg.c"})]
    assert "pkg.c:9" in describe(graph, frozenset({"pkg.a", "pkg.b", "pkg.c"}))
