"""What the fleet's processes logged during ``lgos-bench outage``: their
warnings and errors, grouped, with the exception each carried and where it
was raised, counted per phase.

An answer 500 or a run that failed is explained by the log record the
process wrote when it happened (``request.failed`` with its traceback, a
job's failure ...); reading the logs of three processes by hand after every
run is what this saves. ``lgos serve`` and ``lgos worker`` write one JSON
object per line (``langgraph_openai_serve.logs``): ``ts`` (UTC, ms),
``level``, ``logger``, ``message`` and ``exception`` (the formatted
traceback, chained causes included). Lines that are not JSON (a traceback
printed to stderr by hand) are kept as blocks and read the same way.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LEVELS = ("critical", "error", "warning")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)')
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*)(?::|$)")
_NOT_EXCEPTIONS = ("Traceback", "During handling", "The above exception")
_GROUP_PREFIX = re.compile(r"^\s*\|\s?")
"""An exception group's members are printed behind ``| ``."""
_VARYING = re.compile(r"\d+(?:\.\d+){3}|0x[0-9a-f]+|\b[\w-]*\d[\w-]*\b")
"""Addresses, ports, ids: what differs between alike records."""


@dataclass(frozen=True, slots=True)
class Raised:
    """One exception of a traceback: its class and its innermost frame."""

    exception: str
    where: str | None
    says: str = ""
    """Its message's first line, ports, ids and addresses masked."""


@dataclass(frozen=True, slots=True)
class Record:
    process: str
    """``serve`` or ``worker`` (the file's name without its number)."""
    level: str
    at: float | None
    """Unix seconds, when the record says."""
    event: str
    """The message up to its first colon: LGOS's event name."""
    raised: tuple[Raised, ...] = ()
    """Outermost cause first, the exception that was logged last."""


def _short(path: str) -> str:
    for marker in ("site-packages/", "/src/"):
        if marker in path:
            return path.rsplit(marker, 1)[1]
    return path


def exceptions(traceback: str) -> tuple[Raised, ...]:
    """The exceptions of a formatted traceback, in the order printed (the
    first cause first), each with the last frame printed before it."""
    found: list[Raised] = []
    where: str | None = None
    for raw in traceback.splitlines():
        line = _GROUP_PREFIX.sub("", raw, count=1) if "|" in raw[:40] else raw
        frame = _FRAME.match(line)
        if frame:
            path, number, function = frame.groups()
            where = f"{_short(path)}:{number} in {function}"
            continue
        if not line or line[0].isspace() or line.startswith(_NOT_EXCEPTIONS):
            continue
        named = _EXCEPTION.match(line)
        if named and ("Error" in line or "Exception" in line or ":" in line):
            says = _VARYING.sub("…", line[named.end() :].strip())
            found.append(Raised(named.group(1), where, says[:200]))
            where = None
    return tuple(found)


_EVENT_NAME = re.compile(r"[a-z_]+(?:\.[a-z_]+)+")


def _event(message: str) -> str:
    """LGOS's event name (``request.failed``...), or a library's message up
    to its first colon with ids and addresses masked, so alike records
    group."""
    head = message.split(":", 1)[0].strip()
    first = head.split(maxsplit=1)[0] if head else ""
    if _EVENT_NAME.fullmatch(first):
        return first
    head = _VARYING.sub("…", head)
    return head if len(head) <= 60 else head[:57] + "..."


def _unix(ts: object) -> float | None:
    if not isinstance(ts, str):
        return None
    try:
        moment = dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        return None
    return moment.replace(tzinfo=dt.UTC).timestamp()


def read(path: Path) -> Iterator[Record]:
    """The warnings and errors of one process's log."""
    process = re.sub(r"-\d+$", "", path.stem)
    block: list[str] = []

    def unstructured() -> Iterator[Record]:
        text = "\n".join(block)
        block.clear()
        if "Traceback" in text:
            yield Record(process, "stderr", None, "traceback", exceptions(text))

    for line in path.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            block.append(line)
            continue
        if not isinstance(entry, dict):
            block.append(line)
            continue
        yield from unstructured()
        level = str(entry.get("level", "")).lower()
        if level not in LEVELS:
            continue
        yield Record(
            process,
            level,
            _unix(entry.get("ts")),
            _event(str(entry.get("message", ""))),
            exceptions(str(entry.get("exception") or "")),
        )
    yield from unstructured()


def summarize(
    paths: Iterable[Path], phase_of: Callable[[float | None], str]
) -> list[dict[str, Any]]:
    """The records of every log, grouped by process, level, event and the
    logged exception (its class and where it was raised, its first cause's
    class, and what the first cause says), most severe first, then most
    frequent; each group counted per phase (``phase_of`` names the phase of
    a Unix time). A record is stamped when it was logged: an error a task
    kept until the process stopped counts in the phase of the stop, and
    what its cause says tells which fault it was."""
    groups: dict[tuple[str, ...], Counter[str]] = {}
    for path in sorted(paths):
        for record in read(path):
            last = record.raised[-1] if record.raised else Raised("", None)
            first = record.raised[0] if len(record.raised) > 1 else Raised("", None)
            key = (
                record.process,
                record.level,
                record.event,
                last.exception,
                last.where or "",
                first.exception,
                (first if first.exception else last).says,
            )
            groups.setdefault(key, Counter())[phase_of(record.at)] += 1
    order = ("critical", "error", "stderr", "warning")
    severity = {level: index for index, level in enumerate(order)}
    rows = [
        {
            "process": process,
            "level": level,
            "event": event,
            "exception": exception or None,
            "raised_at": where or None,
            "first_cause": first or None,
            "says": says or None,
            "count": sum(counts.values()),
            "phases": dict(counts),
        }
        for (
            process,
            level,
            event,
            exception,
            where,
            first,
            says,
        ), counts in groups.items()
    ]
    return sorted(rows, key=lambda row: (severity.get(row["level"], 9), -row["count"]))
