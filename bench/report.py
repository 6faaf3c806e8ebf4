"""Turns the records from one run into the markdown report (printed and saved)."""

from __future__ import annotations

from .common import Record

TARGETS = {
    "drain": "≥ 2× huey like-for-like",
    "drain_default": "≥ 1× huey like-for-like",
    "enqueue": "≥ 1× huey like-for-like",
    "many": "≥ 100,000 jobs/s",
    "latency_p50": "p50 ≤ 10 ms",
}


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "ms":
        return f"{value:.2f} ms"
    return f"{value:,.0f} {unit}"


def _ratio(ours: Record | None, ref: Record | None, label: str) -> tuple[str, float | None]:
    if ours is None or ref is None or not ref.value:
        return "n/a", None
    r = ours.value / ref.value
    return f"{r:.2f}× ({label}: {fmt(ref.value, ref.unit)})", r


def _best(records: list[Record], prefix: str) -> Record | None:
    found = [r for r in records if r.key.startswith(prefix)]
    return max(found, key=lambda r: r.value) if found else None


def _get(records: list[Record], key: str) -> Record | None:
    return next((r for r in records if r.key == key), None)


def comparison_rows(records: list[Record]) -> list[list[str]]:
    huey_lfl_drain = _best(records, "huey.lfl.drain.")
    huey_lfl_enq = _best(records, "huey.lfl.enqueue.")
    huey_def_drain = _best(records, "huey.default.drain.")
    huey_def_enq = _best(records, "huey.default.enqueue.")

    def huey_for(ours: Record | None, lfl: Record | None, default: Record | None) -> tuple[Record | None, str]:
        """The huey figure at the same durability as ``ours`` (if any was measured)."""
        if ours is None:
            return None, ""
        for ref, label in ((lfl, "huey LfL"), (default, "huey defaults")):
            if ref is not None and ref.durability == ours.durability:
                workers = ref.extra.get("workers")
                return ref, f"{label}, {workers} thr" if "drain" in ref.key else label
        return None, ""

    rows: list[list[str]] = []
    for sync in ("normal", "full"):
        # drain
        ours = _best(records, f"ours.drain.{sync}.")
        ref, label = huey_for(ours, huey_lfl_drain, huey_def_drain)
        vs_huey, r_huey = _ratio(ours, ref, label)
        vs_raw50, _ = _ratio(ours, _get(records, f"raw.claim50.{sync}"), "raw 50/tx")
        vs_raw1, _ = _ratio(ours, _get(records, f"raw.claim1.{sync}"), "raw 1/tx")
        vs_raw = vs_raw50 if vs_raw1 == "n/a" else f"{vs_raw50}; {vs_raw1}"
        status = _status(sync, r_huey is not None and r_huey >= 2.0, ours, r_huey)
        conc = f", concurrency {ours.extra.get('concurrency')}" if ours else ""
        rows.append(
            [
                f"drain {_n(ours)} backlog (best{conc})",
                *_cells(ours),
                vs_huey,
                vs_raw,
                TARGETS["drain"] if sync == "normal" else "(info)",
                status,
            ]
        )
        # drain at the default worker concurrency (5): what most users will measure first
        ours = _get(records, f"ours.drain.{sync}.c5")
        if ours is not None:
            ref, label = huey_for(ours, huey_lfl_drain, huey_def_drain)
            vs_huey, r_huey = _ratio(ours, ref, label)
            vs_raw1, _ = _ratio(ours, _get(records, f"raw.claim1.{sync}"), "raw 1/tx")
            status = _status(sync, r_huey is not None and r_huey >= 1.0, ours, r_huey)
            rows.append(
                [
                    f"drain {_n(ours)} backlog (default concurrency 5)",
                    *_cells(ours),
                    vs_huey,
                    vs_raw1,
                    TARGETS["drain_default"] if sync == "normal" else "(info)",
                    status,
                ]
            )
        # the optional uvloop extra, where measured (default concurrency and single enqueue)
        for key, what, huey_ref in (
            (f"ours_uvloop.drain.{sync}.c5", "drain {n} backlog (concurrency 5) on uvloop (optional extra)", "drain"),
            (f"ours_uvloop.enqueue.{sync}", "single enqueue on uvloop (optional extra)", "enqueue"),
        ):
            ours = _get(records, key)
            if ours is None:
                continue
            lfl, default = (huey_lfl_drain, huey_def_drain) if huey_ref == "drain" else (huey_lfl_enq, huey_def_enq)
            ref, label = huey_for(ours, lfl, default)
            vs_huey, _ = _ratio(ours, ref, label)
            rows.append([what.format(n=_n(ours)), *_cells(ours), vs_huey, "n/a", "(info)", ""])
        # single enqueue
        ours = _get(records, f"ours.enqueue.{sync}")
        ref, label = huey_for(ours, huey_lfl_enq, huey_def_enq)
        vs_huey, r_huey = _ratio(ours, ref, label)
        vs_raw, _ = _ratio(ours, _get(records, f"raw.insert1.{sync}"), "raw insert 1/tx")
        status = _status(sync, r_huey is not None and r_huey >= 1.0, ours, r_huey)
        rows.append(
            [
                "single enqueue",
                *_cells(ours),
                vs_huey,
                vs_raw,
                TARGETS["enqueue"] if sync == "normal" else "(info)",
                status,
            ]
        )
        # enqueue_many
        ours = _get(records, f"ours.many.{sync}")
        vs_raw, _ = _ratio(ours, _get(records, f"raw.insert1000.{sync}"), "raw insert 1000/tx")
        status = _status(sync, ours is not None and ours.value >= 100_000, ours, ours.value if ours else None)
        rows.append(
            [
                "enqueue_many (1000/batch)",
                *_cells(ours),
                "n/a (huey has no batch enqueue)",
                vs_raw,
                TARGETS["many"] if sync == "normal" else "(info)",
                status,
            ]
        )
        # latency
        p50 = _get(records, f"ours.latency_p50.{sync}")
        p99 = _get(records, f"ours.latency_p99.{sync}")
        status = _status(sync, p50 is not None and p50.value <= 10.0, p50, p50.value if p50 else None)
        rows.append(
            [
                "enqueue→start p50, 2 processes",
                *_cells(p50),
                "n/a",
                "n/a",
                TARGETS["latency_p50"] if sync == "normal" else "(info)",
                status,
            ]
        )
        rows.append(["enqueue→start p99, 2 processes", *_cells(p99), "n/a", "n/a", "—", ""])
    return [row for row in rows if row[2] != "—"]


def _n(rec: Record | None) -> str:
    n = rec.extra.get("jobs") if rec else None
    return f"{n // 1000}k" if n and n % 1000 == 0 else str(n or "")


def _cells(rec: Record | None) -> list[str]:
    if rec is None:
        return ["—", "—"]
    return [rec.durability, fmt(rec.value, rec.unit)]


def _status(sync: str, ok: bool, ours: Record | None, measure: float | None) -> str:
    if sync != "normal":
        return ""
    if ours is None or measure is None:
        return "not measured"
    return "**met**" if ok else "**not met**"


def huey_best_rows(records: list[Record]) -> list[list[str]]:
    """Our drain at concurrency 64 (and at its best) against each huey configuration measured:
    defaults, like-for-like, and tuned (like-for-like storage, polling -d 0.001 -m 0.01)."""
    refs = [
        ("huey defaults", _best(records, "huey.default.drain.")),
        ("huey like-for-like", _best(records, "huey.lfl.drain.")),
        ("huey tuned (-d 0.001 -m 0.01)", _best(records, "huey.tuned.drain.")),
    ]
    rows: list[list[str]] = []
    at_64, best = _get(records, "ours.drain.normal.c64"), _best(records, "ours.drain.normal.")
    for what, ours in (("ours, concurrency 64", at_64), ("ours, best concurrency", best)):
        if ours is None or (what.endswith("best concurrency") and ours is at_64):
            continue
        cells = []
        for label, ref in refs:
            text, _ = _ratio(ours, ref, label.split(" (")[0])
            cells.append(text)
        tuned = refs[2][1]
        ok = tuned is not None and tuned.value > 0 and ours.value / tuned.value >= 2.0
        conc = ours.extra.get("concurrency")
        status = "" if conc != 64 else ("not measured" if tuned is None else ("**met**" if ok else "**not met**"))
        rows.append(
            [f"{what} ({conc})", fmt(ours.value, ours.unit), *cells, "≥ 2× huey tuned" if conc == 64 else "", status]
        )
    return rows


def cpu_rows(records: list[Record]) -> list[list[str]]:
    """CPU µs per job by thread for each of our drains (``monque_engine_bench._ThreadCpu``)."""
    rows: list[list[str]] = []
    for r in sorted(records, key=lambda r: r.key):
        cpu = r.extra.get("cpu_us_per_job")
        if not r.key.startswith(("ours.drain.", "ours_uvloop.drain.")) or not isinstance(cpu, dict):
            continue
        threads = ", ".join(f"{k} {v:.1f}" for k, v in cpu.items() if k not in ("total", "loop", "store writer"))
        rows.append(
            [
                r.key,
                f"{cpu.get('total', 0):.1f}",
                f"{cpu.get('loop', 0):.1f}",
                f"{cpu.get('store writer', 0):.1f}",
                threads or "—",
            ]
        )
    return rows


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


#: (label, ours key or prefix for the best of several, huey key prefix) for per-round ratios.
ROUND_RATIOS = [
    ("drain, best concurrency / huey LfL best", "ours.drain.normal.", "huey.lfl.drain."),
    ("drain, concurrency 64 / huey LfL best", "ours.drain.normal.c64", "huey.lfl.drain."),
    ("drain, concurrency 5 / huey LfL best", "ours.drain.normal.c5", "huey.lfl.drain."),
    ("drain, concurrency 64 / huey tuned best", "ours.drain.normal.c64", "huey.tuned.drain."),
    ("drain, concurrency 64 / huey defaults", "ours.drain.normal.c64", "huey.default.drain."),
    ("single enqueue / huey LfL best", "ours.enqueue.normal", "huey.lfl.enqueue."),
    ("drain, concurrency 5 on uvloop / huey LfL best", "ours_uvloop.drain.normal.c5", "huey.lfl.drain."),
    ("single enqueue on uvloop / huey LfL best", "ours_uvloop.enqueue.normal", "huey.lfl.enqueue."),
]


def round_ratio_rows(rounds: list[list[Record]]) -> list[list[str]]:
    """Each ratio computed inside one round (ours and huey measured minutes apart), then the
    median over rounds: steadier on a busy machine than a ratio of medians."""
    rows: list[list[str]] = []
    for label, ours_key, ref_prefix in ROUND_RATIOS:
        ratios: list[float] = []
        for records in rounds:
            ours = _best(records, ours_key) if ours_key.endswith(".") else _get(records, ours_key)
            ref = _best(records, ref_prefix)
            if ours is not None and ref is not None and ref.value:
                ratios.append(ours.value / ref.value)
        if ratios:
            ordered = sorted(ratios)
            median = ordered[(len(ordered) - 1) // 2]
            rows.append([label, ", ".join(f"{r:.2f}×" for r in ratios), f"**{median:.2f}×**"])
    return rows


def render(
    records: list[Record],
    failures: list[str],
    facts: dict[str, str],
    params: dict[str, str],
    stderr_notes: list[str] | None = None,
    rounds: list[list[Record]] | None = None,
) -> str:
    parts = ["# monque_engine benchmark", ""]
    parts.append("Machine: " + "; ".join(f"{k}: {v}" for k, v in facts.items()))
    parts.append("")
    parts.append("Run: " + "; ".join(f"{k}={v}" for k, v in params.items()))
    parts.append("")
    parts.append("## Ours against huey (same durability) and the raw SQLite ceiling")
    parts.append("")
    parts.append(
        table(
            ["Measure", "Durability", "monque_engine", "vs huey", "vs raw ceiling", "Target", "Status"],
            comparison_rows(records),
        )
    )
    parts.append("")
    best_rows = huey_best_rows(records)
    if best_rows:
        parts.append("## Drain against huey at its best (WAL, synchronous=NORMAL)")
        parts.append("")
        parts.append(
            table(
                [
                    "Our drain",
                    "jobs/s",
                    "vs huey defaults",
                    "vs huey like-for-like",
                    "vs huey tuned",
                    "Target",
                    "Status",
                ],
                best_rows,
            )
        )
        parts.append("")
    rows_cpu = cpu_rows(records)
    if rows_cpu:
        parts.append("## CPU per job of our drains, by thread (µs)")
        parts.append("")
        parts.append(table(["Unit", "total", "event loop", "store writer", "other threads"], rows_cpu))
        parts.append("")
    ratio_rows = round_ratio_rows(rounds) if rounds and len(rounds) > 1 else []
    if ratio_rows:
        parts.append("## Ratios per round (WAL, synchronous=NORMAL)")
        parts.append("")
        parts.append(table(["Ratio", "Each round", "Median"], ratio_rows))
        parts.append("")
    parts.append("## Every figure")
    parts.append("")
    parts.append(
        table(
            ["Subject", "Measure", "Durability", "Result", "Settings"],
            [[r.subject, r.measure, r.durability, fmt(r.value, r.unit), r.settings] for r in records],
        )
    )
    parts.append("")
    notes = [f"- {r.key}: {note}" for r in records for note in r.notes]
    notes += [f"- FAILED {f}" for f in failures]
    notes += [f"- {n}" for n in stderr_notes or []]
    notes += [
        "- huey defaults: huey 3.x `SqliteHuey` sets no `synchronous` pragma (`fsync=None`), so SQLite's "
        "compiled default applies; the durability shown for huey is read back from huey's own connection. "
        "(`fsync=False` would mean synchronous=OFF.) huey like-for-like = WAL + synchronous=NORMAL via a "
        "`SqliteStorage` subclass; its drain is the best of Consumer workers=1 and workers=4 (threads). "
        "huey tuned = like-for-like storage and the consumer's polling at its fastest, as "
        "`huey_consumer -d 0.001 -m 0.01` (`Consumer(initial_delay=0.001, max_delay=0.01)`; huey's defaults are "
        "0.1 s backing off to 10 s).",
        "- huey deletes each task row as it dequeues it; monque_engine keeps the job and records claim and "
        "completion (two guarded writes per job plus change-feed rows).",
        "- Ratios for the full-durability rows compare against huey/raw at the same synchronous setting, "
        "where one was measured.",
    ]
    parts.append("## Notes")
    parts.append("")
    parts.extend(notes)
    parts.append("")
    return "\n".join(parts)
