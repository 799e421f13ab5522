"""A 10,000-line batch on a fast graph: lines per second with 1 and 2
workers, and the worker's memory at the start and the end.

``lgos-bench batches`` starts a throwaway PostgreSQL (``lgos db-setup``),
SeaweedFS and the Files API (with a service key for LGOS), one ``lgos
serve`` and the workers on the PostgreSQL backend. For each worker count it
uploads a JSONL file of ``--lines`` Responses requests for the plain graph
(8 tokens), creates a batch, and polls it until it ends: *validate* is
create to ``in_progress``, *run* is ``in_progress`` to ``finalizing`` (the
lines), *finalize* is writing the output file. Workers' RSS is read from
``/proc`` before the first batch and after each.

``batch_stack`` and ``follow_batch`` serve ``lgos-bench fairshare`` too:
there the Files API knows one owner key per tenant (the same keys as the
fleet's ``LGOS_API_KEYS``), and several batches are followed at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from lgos_stack.files import weed_mini_argv
from lgos_stack.net import LOOPBACK, free_port
from lgos_stack.processes import running

from lgos_bench.fleet import BENCH_TOKENS, REGISTRY, Fleet, Log, fleet
from lgos_bench.report import RESULTS_DIR, fmt, write_pair
from lgos_bench.suite import run_meta, run_preamble
from lgos_bench.workload import PLAIN, Workload

DEFAULT_LINES = 10_000
WORKER_COUNTS = (1, 2)
_S3_KEYS = ("lgos-bench-access", "lgos-bench-secret-key")
_SERVICE_KEY = "sk-lgos-bench-service"
_OWNER_KEY = "sk-lgos-bench-owner"
_OWNER = "default"  # the scope of a server without API keys
OWNERS = {_OWNER_KEY: _OWNER}
"""The Files API's owner keys (key -> owner) when the fleet has no API keys."""
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
POLL_SECONDS = 0.2


WARMUP_LINES = 200


@dataclass(frozen=True, slots=True)
class Stack:
    fleet: Fleet
    """PostgreSQL, one ``lgos serve`` and the workers started so far."""
    files: str

    @property
    def base(self) -> str:
        return self.fleet.apis[0]


@contextmanager
def batch_stack(
    folder: Path,
    log: Log,
    *,
    owners: Mapping[str, str] = OWNERS,
    apis: int = 1,
    registry: str = REGISTRY,
    workload: Workload | None = None,
    env: Mapping[str, str] | None = None,
    python: str | None = None,
) -> Iterator[Stack]:
    """The Files API (LGOS uses it with a service key; ``owners`` maps each
    owner key to its owner, a tenant's scope), PostgreSQL and ``apis``
    ``lgos serve``; workers are added by the bench. ``registry``,
    ``workload``, ``env`` and ``python`` go to the fleet (``fleet.fleet``)."""
    with _files_api(folder, log, owners) as files:
        batch_env = {
            "LGOS_BATCH_FILES_URL": f"{files}/v1",
            "LGOS_BATCH_FILES_API_KEY": _SERVICE_KEY,
            **(env or {}),
        }
        with fleet(
            folder,
            log,
            apis=apis,
            workers=0,
            registry=registry,
            workload=workload,
            env=batch_env,
            python=python,
        ) as running_fleet:
            yield Stack(running_fleet, files)


@contextmanager
def _files_api(folder: Path, log: Log, owners: Mapping[str, str]) -> Iterator[str]:
    root = folder / "seaweedfs"
    for name in ("data", "log", "tmp"):
        (root / name).mkdir(parents=True)
    s3_port, files_port = free_port(), free_port()
    weed = str(Path(sys.executable).parent / "weed")
    s3 = f"http://{LOOPBACK}:{s3_port}"
    access, secret = _S3_KEYS
    weed_env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": access,
        "AWS_SECRET_ACCESS_KEY": secret,
        "TMPDIR": str(root / "tmp"),
    }
    files_env = {
        **os.environ,
        "LGOS_FILES_S3_ENDPOINT": s3,
        "LGOS_FILES_S3_BUCKET": "lgos-bench-batches",
        "LGOS_FILES_S3_ACCESS_KEY": access,
        "LGOS_FILES_S3_SECRET_KEY": secret,
        "LGOS_FILES_API_KEYS": json.dumps(dict(owners)),
        "LGOS_FILES_SERVICE_KEYS": json.dumps([_SERVICE_KEY]),
    }
    files = f"http://{LOOPBACK}:{files_port}"
    files_api = [sys.executable, "-m", "lgos_files_api"]
    files_api += [f"--host={LOOPBACK}", f"--port={files_port}", "--log-level=warning"]
    # SeaweedFS's S3 port answers before its filer serves; the Files API's
    # health (which creates the bucket) says when both do.
    with (
        running(
            weed_mini_argv(weed, root, s3_port),
            log=folder / "weed.log",
            name="SeaweedFS",
            env=weed_env,
            cwd=root,
        ),
        running(
            files_api,
            log=folder / "files.log",
            name="Files API",
            env=files_env,
            health_url=f"{files}/health",
            timeout=120,
        ),
    ):
        log("SeaweedFS and the Files API are up")
        yield files


def rss_kib(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` (peak) of a process, in KiB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0])
    return found


def input_file(lines: int, model: str = PLAIN) -> bytes:
    """``lines`` ``/v1/responses`` requests of ``model``, as a batch's JSONL."""
    return "".join(
        json.dumps(
            {
                "custom_id": f"line-{index}",
                "method": "POST",
                "url": "/v1/responses",
                "body": {"model": model, "input": f"Question {index}?"},
            }
        )
        + "\n"
        for index in range(lines)
    ).encode()


@dataclass(frozen=True, slots=True)
class BatchEnd:
    """One batch followed to its end, as its owner saw it by polling."""

    batch_id: str
    status: str
    request_counts: dict[str, int]
    created: float
    """When the create request was sent (Unix seconds)."""
    seen: dict[str, float] = field(default_factory=dict)
    """When each status was first seen (Unix seconds)."""

    @property
    def ended(self) -> float:
        return self.seen[self.status]

    def figures(self) -> dict[str, Any]:
        """The phases' durations in seconds: *validate* is create to
        ``in_progress``, *run* to ``finalizing``, *finalize* to the end."""
        end = self.ended - self.created
        started = self.seen.get("in_progress", self.ended) - self.created
        finalizing = self.seen.get("finalizing", self.ended) - self.created
        return {
            "status": self.status,
            "request_counts": self.request_counts,
            "validate_s": started,
            "run_s": finalizing - started,
            "finalize_s": end - finalizing,
            "total_s": end,
        }


def _bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


async def create_batch(
    http: httpx.AsyncClient, stack: Stack, content: bytes, key: str
) -> tuple[str, float]:
    """Upload ``content`` to the Files API and create a batch of it, both as
    the owner of ``key``; the batch's id and when its create was sent."""
    uploaded = await http.post(
        f"{stack.files}/v1/files",
        headers=_bearer(key),
        files={"file": ("bench.jsonl", content)},
        data={"purpose": "batch"},
    )
    uploaded.raise_for_status()
    created_at = time.time()
    created = await http.post(
        f"{stack.base}/batches",
        headers=_bearer(key),
        json={
            "input_file_id": uploaded.json()["id"],
            "endpoint": "/v1/responses",
            "completion_window": "24h",
        },
    )
    created.raise_for_status()
    return str(created.json()["id"]), created_at


async def follow_batch(
    http: httpx.AsyncClient,
    stack: Stack,
    batch_id: str,
    created: float,
    key: str,
    *,
    poll: float = POLL_SECONDS,
    on_status: Callable[[str], None] | None = None,
) -> BatchEnd:
    """Poll the batch until it ends; ``on_status`` hears each new status."""
    seen: dict[str, float] = {}
    while True:
        answer = await http.get(
            f"{stack.base}/batches/{batch_id}", headers=_bearer(key)
        )
        answer.raise_for_status()
        batch = answer.json()
        if batch["status"] not in seen:
            seen[batch["status"]] = time.time()
            if on_status is not None:
                on_status(batch["status"])
        if batch["status"] in TERMINAL:
            return BatchEnd(
                batch_id, batch["status"], batch["request_counts"], created, seen
            )
        await asyncio.sleep(poll)


def run_batch(stack: Stack, content: bytes, log: Log) -> dict[str, Any]:
    """Upload, create, poll to the end; the phases' durations in seconds."""

    async def submit_and_follow() -> BatchEnd:
        async with httpx.AsyncClient(timeout=300) as http:
            batch_id, created = await create_batch(http, stack, content, _OWNER_KEY)
            return await follow_batch(http, stack, batch_id, created, _OWNER_KEY)

    ended = asyncio.run(submit_and_follow())
    figures = ended.figures()
    log(
        f"batch {ended.batch_id}: {ended.status} {ended.request_counts} in "
        f"{figures['total_s']:.1f} s"
    )
    return figures


def measure(lines: int, log: Log) -> dict[str, Any]:
    content = input_file(lines)
    warmup = input_file(WARMUP_LINES)
    runs = []
    with (
        tempfile.TemporaryDirectory(prefix="lgos-bench-batches-") as folder,
        batch_stack(Path(folder), log) as stack,
    ):
        workers = stack.fleet.started_workers
        for count in WORKER_COUNTS:
            while len(workers) < count:
                stack.fleet.start_worker()
            log(f"{count} worker(s): warm-up batch of {WARMUP_LINES} lines")
            run_batch(stack, warmup, log)
            before = {w.pid: rss_kib(w.pid) for w in workers}
            log(f"{count} worker(s): {lines} lines")
            figures = run_batch(stack, content, log)
            after = {w.pid: rss_kib(w.pid) for w in workers}
            figures["workers"] = count
            run_s, total_s = figures["run_s"], figures["total_s"]
            figures["lines_per_s_run"] = lines / run_s if run_s else None
            figures["lines_per_s_total"] = lines / total_s
            figures["worker_rss_kib"] = [
                {
                    "before": before[pid]["VmRSS"],
                    "after": after[pid]["VmRSS"],
                    "peak": after[pid]["VmHWM"],
                }
                for pid in before
            ]
            runs.append(figures)
    return {
        "lines": lines,
        "warmup_lines": WARMUP_LINES,
        "tokens": BENCH_TOKENS,
        "runs": runs,
    }


def run(lines: int, log: Log) -> dict[str, Any]:
    meta = run_meta("batches")
    return {"meta": meta, "batches": measure(lines, log)}


def render(results: dict[str, Any]) -> str:
    meta, figures = results["meta"], results["batches"]
    lines = [
        "# lgos-bench: a batch on PostgreSQL workers",
        "",
        run_preamble(meta)
        + f" {figures['lines']} `/v1/responses` lines of the plain graph "
        f"({figures['tokens']} tokens), default batch settings (4 chunks of 25 "
        "lines at a time); one `lgos serve`, PostgreSQL, SeaweedFS and the Files "
        "API on loopback. Each measured batch follows a warm-up batch of "
        f"{figures['warmup_lines']} lines; worker memory is read before and after "
        "the measured one. The 2-worker run reuses the first worker and adds one.",
        "",
        "| workers | status | validate s | run s | finalize s | total s | "
        "lines/s (run) | lines/s (total) | worker RSS MiB before → after (peak) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in figures["runs"]:
        memory = ", ".join(_memory(w) for w in run["worker_rss_kib"])
        cells = [
            str(run["workers"]),
            run["status"],
            fmt(run["validate_s"], 1),
            fmt(run["run_s"], 1),
            fmt(run["finalize_s"], 1),
            fmt(run["total_s"], 1),
            fmt(run["lines_per_s_run"], 0),
            fmt(run["lines_per_s_total"], 0),
            memory,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _memory(kib: dict[str, int]) -> str:
    before, after, peak = (kib[key] / 1024 for key in ("before", "after", "peak"))
    return f"{before:.0f} → {after:.0f} ({peak:.0f})"


def write(results: dict[str, Any], directory: Path = RESULTS_DIR) -> tuple[Path, Path]:
    """``<timestamp>-batches.md`` and ``.json`` in ``directory``."""
    return write_pair(results, render(results), directory)
