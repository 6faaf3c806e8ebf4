"""Where ``--metrics`` may listen and which job names it reports: checked before anything opens.

Apart from the parser (``entry``) so the rules read in one place: a metrics address beyond
loopback needs ``--allow-remote`` as ``--serve`` does, and ``--allow-remote`` or a names
setting that nothing would use is an error rather than a silent no-op.
"""

from __future__ import annotations

from typing import Any

from ..common.exitcodes import CliError, ExitCode
from ..common.listen import check_remote_listen
from .settings import Resolved

#: The settings only ``--metrics`` reads.
METRICS_ONLY = ("metrics_names", "metrics_max_names")


def metrics_options(settings: Resolved) -> dict[str, Any]:
    """The collector's options (``MonqueCollector(names=, max_names=)``) for ``--metrics``.

    Exit 2 for an address beyond loopback without ``--allow-remote``, for both name settings
    at once, and for a names flag (or ``--allow-remote``) typed without ``--metrics``."""
    if settings["metrics"] is None:
        for dest in METRICS_ONLY:
            if settings.sources.get(dest) == "flag":
                raise CliError(f"{settings.origin(dest)} goes with --metrics [HOST:]PORT", ExitCode.USAGE)
        reject_unused_allow_remote(settings)
        return {}
    if settings["metrics_names"] is not None and settings["metrics_max_names"] is not None:
        raise CliError(
            f"{settings.origin('metrics_names')} and {settings.origin('metrics_max_names')} both say which names "
            "get series of their own: give one",
            ExitCode.USAGE,
        )
    host, port = settings["metrics"]
    check_remote_listen(settings.origin("metrics"), host, port, settings["allow_remote"])
    options: dict[str, Any] = {}
    if settings["metrics_names"] is not None:
        options["names"] = settings["metrics_names"]
    if settings["metrics_max_names"] is not None:
        options["max_names"] = settings["metrics_max_names"]
    return options


def reject_unused_allow_remote(settings: Resolved) -> None:
    """``--allow-remote`` typed where nothing listens: say so (the environment is shared, so not it)."""
    if settings.sources.get("allow_remote") == "flag":
        raise CliError("--allow-remote goes with --serve [HOST:]PORT or --metrics HOST:PORT", ExitCode.USAGE)
