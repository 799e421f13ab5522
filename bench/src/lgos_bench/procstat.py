"""Server cost read from ``/proc``: CPU time and resident memory of a process tree.

CPU is ``utime + stime`` from ``/proc/<pid>/stat`` (all threads of a process),
summed over the server and its descendants (uvicorn's worker processes), so the
load generator's own cost never enters it. The kernel counts in clock ticks
(``SC_CLK_TCK``, usually 100 per second): scenarios run long enough that one
tick is a small fraction of the total.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
_PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str]:
    """The fields after the command name (which may contain spaces)."""
    text = (_PROC / str(pid) / "stat").read_text()
    return text[text.rindex(")") + 2 :].split()


def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parents[int(entry.name)] = int(_stat_fields(int(entry.name))[1])
        except (OSError, ValueError, IndexError):
            continue  # the process ended while we looked
    return parents


def process_tree(pid: int) -> list[int]:
    """``pid`` and every live descendant."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(children.get(current, ()))
    return tree


def cpu_seconds(pids: list[int]) -> float:
    """User plus system CPU time of ``pids`` so far, in seconds."""
    ticks = 0
    for pid in pids:
        try:
            fields = _stat_fields(pid)
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / CLOCK_TICKS


def rss_bytes(pids: list[int]) -> int:
    """Resident set size of ``pids`` (``/proc/<pid>/statm``), in bytes."""
    pages = 0
    for pid in pids:
        try:
            pages += int((_PROC / str(pid) / "statm").read_text().split()[1])
        except OSError:
            continue
    return pages * PAGE_SIZE


def machine_busy_seconds() -> float:
    """CPU time all processes have used, summed over cores (``/proc/stat``):
    user, nice, system, irq and softirq; not idle, iowait or steal."""
    fields = (_PROC / "stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq = map(int, fields[:7])
    return (user + nice + system + irq + softirq) / CLOCK_TICKS


@dataclass(frozen=True, slots=True)
class Usage:
    """One reading of a server's process tree."""

    cpu_seconds: float
    rss_bytes: int


def available_cores() -> list[int]:
    return sorted(os.sched_getaffinity(0))
