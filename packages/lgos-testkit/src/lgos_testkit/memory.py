"""A real process's memory as the kernel counts it, for tests that hold a
server to a memory bound: its resident set now (``VmRSS``) and its peak
(``VmHWM``), which a test resets before the input it measures."""

from __future__ import annotations

from pathlib import Path

KIB = 1024


def memory_bytes(pid: int, field: str = "VmRSS") -> int:
    """A size line of ``/proc/<pid>/status`` (``VmRSS``, ``VmHWM``...), in
    bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * KIB
    raise LookupError(f"{field} missing from /proc/{pid}/status")


def peak_rss_bytes(pid: int) -> int:
    """The most memory the process has held resident since it started or
    since ``reset_peak_rss``."""
    return memory_bytes(pid, "VmHWM")


def reset_peak_rss(pid: int) -> None:
    """Make the peak the current resident size (``5`` to ``clear_refs``,
    Linux 4.0 and later; the process must be the caller's own)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
