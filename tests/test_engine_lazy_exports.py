"""``monque_engine``'s names load on first use (PEP 562: issue 40, the console's launch), and
the public API is what it was: every name of ``__all__`` resolves, ``import *`` binds them
all, ``dir()`` lists them, and each is the very object its submodule defines. Checked in a
fresh interpreter, where nothing has imported the submodules yet."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import importlib, json, sys
import monque_engine
before = sorted(m for m in sys.modules if m.startswith("monque_engine."))
namespace = {}
exec("from monque_engine import *", namespace)
missing = [name for name in monque_engine.__all__ if name not in namespace]
unlisted = [name for name in monque_engine.__all__ if name not in dir(monque_engine)]
wrong = [
    name
    for name, module in monque_engine._EXPORTS.items()
    if getattr(importlib.import_module(module, "monque_engine"), name) is not namespace[name]
]
try:
    monque_engine.NoSuchName
    error = None
except AttributeError as caught:
    error = str(caught)
print(json.dumps({"before": before, "missing": missing, "unlisted": unlisted, "wrong": wrong, "error": error,
                  "exports": sorted(monque_engine._EXPORTS), "all": sorted(monque_engine.__all__)}))
"""


def test_the_package_imports_no_submodule_and_every_public_name_resolves_to_its_own_object() -> None:
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["before"] == ["monque_engine.version"], report["before"]
    assert report["missing"] == [] and report["unlisted"] == [] and report["wrong"] == [], report
    assert report["error"] == "module 'monque_engine' has no attribute 'NoSuchName'"
    assert report["exports"] == sorted(set(report["all"]) - {"__version__"})
