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
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from lgos_stack.files import weed_mini_argv
from lgos_stack.net import LOOPBACK, free_port
from lgos_stack.processes import running

from lgos_bench.fleet import BENCH_TOKENS, Fleet, Log, fleet
from lgos_bench.report import RESULTS_DIR, fmt, write_pair
from lgos_bench.suite import background_cores, library_revision
from lgos_bench.workload import PLAIN

DEFAULT_LINES = 10_000
WORKER_COUNTS = (1, 2)
_S3_KEYS = ("lgos-bench-access", "lgos-bench-secret-key")
_SERVICE_KEY = "sk-lgos-bench-service"
_OWNER_KEY = "sk-lgos-bench-owner"
_OWNER = "default"  # the scope of a server without API keys


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
def batch_stack(folder: Path, log: Log) -> Iterator[Stack]:
    """The Files API (LGOS uses it with a service key), PostgreSQL and one
    ``lgos serve``; workers are added by the bench."""
    with _files_api(folder, log) as files:
        batch_env = {
            "LGOS_BATCH_FILES_URL": f"{files}/v1",
            "LGOS_BATCH_FILES_API_KEY": _SERVICE_KEY,
        }
        with fleet(folder, log, apis=1, workers=0, env=batch_env) as running_fleet:
            yield Stack(running_fleet, files)


@contextmanager
def _files_api(folder: Path, log: Log) -> Iterator[str]:
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
        "LGOS_FILES_API_KEYS": json.dumps({_OWNER_KEY: _OWNER}),
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


def input_file(lines: int) -> bytes:
    return "".join(
        json.dumps(
            {
                "custom_id": f"line-{index}",
                "method": "POST",
                "url": "/v1/responses",
                "body": {"model": PLAIN, "input": f"Question {index}?"},
            }
        )
        + "\n"
        for index in range(lines)
    ).encode()


def run_batch(stack: Stack, content: bytes, log: Log) -> dict[str, Any]:
    """Upload, create, poll to the end; the phases' durations in seconds."""
    owner = {"authorization": f"Bearer {_OWNER_KEY}"}
    with httpx.Client(timeout=300) as client:
        uploaded = client.post(
            f"{stack.files}/v1/files",
            headers=owner,
            files={"file": ("bench.jsonl", content)},
            data={"purpose": "batch"},
        )
        uploaded.raise_for_status()
        began = time.perf_counter()
        created = client.post(
            f"{stack.base}/batches",
            json={
                "input_file_id": uploaded.json()["id"],
                "endpoint": "/v1/responses",
                "completion_window": "24h",
            },
        )
        created.raise_for_status()
        batch_id = created.json()["id"]
        seen: dict[str, float] = {}
        while True:
            batch = client.get(f"{stack.base}/batches/{batch_id}").json()
            seen.setdefault(batch["status"], time.perf_counter() - began)
            if batch["status"] in {"completed", "failed", "expired", "cancelled"}:
                break
            time.sleep(0.2)
    end = seen[batch["status"]]
    started = seen.get("in_progress", end)
    finalizing = seen.get("finalizing", end)
    counts = batch["request_counts"]
    log(f"batch {batch_id}: {batch['status']} {counts} in {end:.1f} s")
    return {
        "status": batch["status"],
        "request_counts": counts,
        "validate_s": started,
        "run_s": finalizing - started,
        "finalize_s": end - finalizing,
        "total_s": end,
    }


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
    meta = {
        "mode": "batches",
        "lgos_revision": library_revision(),
        "background_cores_before": round(background_cores(), 2),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    return {"meta": meta, "batches": measure(lines, log)}


def render(results: dict[str, Any]) -> str:
    meta, figures = results["meta"], results["batches"]
    lines = [
        "# lgos-bench: a batch on PostgreSQL workers",
        "",
        f"LGOS {meta['lgos_revision']}, started {meta['started']}; other "
        f"processes kept {meta['background_cores_before']} cores busy before the "
        f"run. {figures['lines']} `/v1/responses` lines of the plain graph "
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
