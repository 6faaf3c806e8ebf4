"""Resolve ``--app PACKAGE.MODULE:ATTR`` to the user's handlers.

Two shapes are accepted because both are natural to write:

* a ``Monque`` instance with handlers registered (``monque = Monque(...)`` plus
  ``@monque.worker("name")``). It is run as it is: its handlers often call
  ``monque.enqueue`` on that very instance, so replacing it would break them.
* a function ``setup(monque)`` (sync or async) that registers handlers on the ``Monque``
  the CLI builds from its URL and options. This is the form that lets every flag apply,
  and the only one the console can use (the console builds its ``Monque`` on its own loop).

Failures become one-line ``CliError``s naming the module, the attribute and, for an
exception raised while importing, the file and line it came from.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from monque_engine import Monque
from monque_engine.store.urls import mask_text

from ..common.exitcodes import CliError, ExitCode

Setup = Callable[[Monque], Awaitable[None]]

_FORMAT = "use --app PACKAGE.MODULE:ATTR, e.g. --app myapp.tasks:monque or --app myapp.tasks:setup"


@dataclass(frozen=True, slots=True)
class LoadedApp:
    spec: str
    #: The app's own Monque, when ATTR names one.
    instance: Monque | None = None
    #: The app's setup function (wrapped to be awaitable), when ATTR names one.
    setup: Setup | None = None


def load_app(spec: str) -> LoadedApp:
    module_name, sep, attr_path = spec.partition(":")
    if not sep or not module_name or not attr_path:
        raise CliError(f"--app {spec!r} is not PACKAGE.MODULE:ATTR; {_FORMAT}", ExitCode.USAGE)
    # Console scripts do not put the working directory on sys.path; users expect their
    # project's modules to be importable from where they run the command (as uvicorn does).
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    module = _import(module_name, spec)
    target: Any = module
    for part in attr_path.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise CliError(
                f"--app {spec!r}: module {module_name!r} has no attribute {attr_path!r}", ExitCode.APP
            ) from None
    if isinstance(target, Monque):
        return LoadedApp(spec, instance=target)
    if inspect.isclass(target) or not callable(target):
        raise CliError(
            f"--app {spec!r}: {attr_path} is a {type(target).__name__}; it must be a Monque instance "
            "or a function that takes a Monque and registers handlers",
            ExitCode.APP,
        )
    return LoadedApp(spec, setup=_awaitable_setup(target, spec))


def _import(module_name: str, spec: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and (module_name == error.name or module_name.startswith(error.name + ".")):
            raise CliError(
                f"--app {spec!r}: cannot import module {module_name!r} ({error}); run from your project "
                "directory or install your package",
                ExitCode.APP,
            ) from None
        raise CliError(f"--app {spec!r}: importing {module_name!r} failed: {_describe(error)}", ExitCode.APP) from error
    except (Exception, SystemExit) as error:  # a module that calls sys.exit("…") as it loads, too
        raise CliError(f"--app {spec!r}: importing {module_name!r} failed: {_describe(error)}", ExitCode.APP) from error


def _describe(error: BaseException) -> str:
    """``NameError: name 'x' is not defined (app.py:12)``: the innermost frame is the useful one."""
    where = ""
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        # Neither the import machinery nor this loader is where the user's mistake is: a
        # SyntaxError's traceback holds only those (its message already names file and line).
        if "importlib" not in frame.filename and frame.filename != __file__:
            filename = frame.filename
            if filename.startswith(os.getcwd() + os.sep):
                filename = os.path.relpath(filename)
            where = f" ({filename}:{frame.lineno})"
            break
    if isinstance(error, SystemExit):  # its "message" is the exit code or the text it was given
        return f"SystemExit: sys.exit({mask_text(repr(error.code))}) was called{where}"
    text = mask_text(str(error))  # a user's module failing to connect often quotes its URL
    return f"{type(error).__name__}: {text}{where}" if text else f"{type(error).__name__}{where}"


def _awaitable_setup(function: Callable[..., Any], spec: str) -> Setup:
    async def setup(monque: Monque) -> None:
        try:
            result = function(monque)
            if inspect.isawaitable(result):
                await result
        except CliError:
            raise
        except AttributeError as error:
            if error.obj is monque and error.name in _JOB_FIELDS:
                # A handler named where the setup goes: it read ``job.data`` off the Monque
                # ("'Monque' object has no attribute 'data'" said nothing of the mistake).
                raise CliError(_handler_named(spec), ExitCode.APP) from error
            raise CliError(f"--app {spec!r}: setup raised {_describe(error)}", ExitCode.APP) from error
        except (Exception, SystemExit) as error:
            raise CliError(f"--app {spec!r}: setup raised {_describe(error)}", ExitCode.APP) from error

    return setup


#: What a handler reads off its job (and a Monque does not have).
_JOB_FIELDS = frozenset({"data", "id", "status", "fail_count", "fail_reason", "unique_key", "attempts"})


def _handler_named(spec: str) -> str:
    module_name, _, attr = spec.partition(":")
    return (
        f"--app {spec!r}: {attr} looks like a job handler (it read a job's field off the Monque it was given); "
        "--app names the function that registers handlers, e.g. def setup(monque): "
        f"monque.register('email.send', {attr.split('.')[-1]}), then --app {module_name}:setup"
    )
