"""Sampling profiles of a server under load, with py-spy.

``py-spy record --nonblocking --format raw`` samples the server process from
outside while the load generator drives one scenario. Samples are turned into
milliseconds of server CPU per request: by package where the time is spent
(the leaf frame), by LGOS source line (inclusive: the line was on the stack),
and by hottest leaf line. Profiling both servers on the same scenario shows
where LGOS spends what the baseline does not.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lgos_bench.load import client_for, run_load, warm
from lgos_bench.scenarios import Scenario
from lgos_bench.servers import Placement, ServerProcess
from lgos_bench.workload import Workload

RATE = 500
_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>.*):(?P<line>\d+)\)$")
LGOS_PACKAGE = "langgraph_openai_serve"


def py_spy() -> str:
    found = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(found).exists():
        raise RuntimeError("py-spy is not installed (it is a lgos-bench dependency)")
    return found


def _package(path: str) -> str:
    parts = Path(path).parts
    if "site-packages" in parts:
        parts = parts[parts.index("site-packages") + 1 :]
    for anchor in ("src", "lib"):
        if anchor in parts[:-1]:
            parts = parts[len(parts) - 1 - parts[::-1].index(anchor) + 1 :]
    head = parts[0] if len(parts) > 1 else Path(path).stem
    return head.removeprefix("<").removesuffix(">")


def _short(path: str) -> str:
    marker = path.rfind(LGOS_PACKAGE)
    return path[marker:] if marker >= 0 else "/".join(Path(path).parts[-2:])


@dataclass
class Samples:
    total: int
    by_package: Counter[str]
    lgos_lines: Counter[str]
    lgos_self: Counter[str]
    leaf_lines: Counter[str]


def parse_raw(text: str) -> Samples:
    """Aggregate py-spy's collapsed stacks (``frame;frame;... count``)."""
    by_package: Counter[str] = Counter()
    lgos_lines: Counter[str] = Counter()
    lgos_self: Counter[str] = Counter()
    leaf_lines: Counter[str] = Counter()
    total = 0
    for line in text.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [m for f in stack.split(";") if (m := _FRAME.match(f))]
        if not frames:
            continue
        total += count
        leaf = frames[-1]
        by_package[_package(leaf["file"])] += count
        where = f"{leaf['func']} ({_short(leaf['file'])}:{leaf['line']})"
        leaf_lines[where] += count
        if LGOS_PACKAGE in leaf["file"]:
            lgos_self[where] += count
        seen = set()
        for frame in frames:
            if LGOS_PACKAGE in frame["file"]:
                where = f"{frame['func']} ({_short(frame['file'])}:{frame['line']})"
                if where not in seen:
                    seen.add(where)
                    lgos_lines[where] += count
    return Samples(total, by_package, lgos_lines, lgos_self, leaf_lines)


async def _drive(
    server: ServerProcess, scenario: Scenario, seconds: float
) -> tuple[int, float]:
    """Load for ``seconds``: requests done and the server's CPU seconds."""
    request = scenario.target
    async with client_for(scenario.concurrency) as client:
        await warm(client, server.base_url, request, scenario.concurrency)
        before = server.usage().cpu_seconds
        result = await run_load(
            client,
            server.base_url,
            request,
            concurrency=scenario.concurrency,
            max_requests=10**6,
            max_seconds=seconds,
        )
        cpu = server.usage().cpu_seconds - before
    return len(result.samples), cpu


def profile_server(
    kind: str,
    scenario: Scenario,
    workload: Workload,
    placement: Placement,
    seconds: float,
) -> dict[str, Any]:
    """Profile ``kind`` under ``scenario`` for ``seconds``; ms/request figures."""
    server = ServerProcess(kind, 1, workload, placement).start()
    assert server.process is not None
    try:
        with tempfile.TemporaryDirectory() as folder:
            raw = Path(folder) / "profile.txt"
            spy = subprocess.Popen(
                [
                    py_spy(),
                    "record",
                    "--pid",
                    str(server.process.pid),
                    "--rate",
                    str(RATE),
                    "--format",
                    "raw",
                    "--nonblocking",
                    "--duration",
                    str(int(seconds) + 2),
                    "--output",
                    str(raw),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(1.0)  # let py-spy attach
            requests, cpu = asyncio.run(_drive(server, scenario, seconds))
            spy.wait(timeout=seconds + 30)
            samples = parse_raw(raw.read_text() if raw.exists() else "")
    finally:
        server.stop()
    # py-spy counts a runnable thread waiting for a core as active, so on a
    # busy machine samples overstate CPU: scale them to the /proc figure.
    requests = max(requests, 1)
    measured_ms = cpu * 1000 / requests
    sampled_ms = samples.total * 1000 / RATE / requests
    scale = measured_ms / sampled_ms if sampled_ms else 0.0
    per_request = 1000 / RATE / requests * scale

    def top(counter: Counter[str], n: int) -> list[tuple[str, float]]:
        return [(key, count * per_request) for key, count in counter.most_common(n)]

    return {
        "server": kind,
        "scenario": scenario.key,
        "requests": requests,
        "samples": samples.total,
        "sampled_ms_per_request": sampled_ms,
        "ms_per_request": measured_ms,
        "by_package": top(samples.by_package, 25),
        "lgos_lines": top(samples.lgos_lines, 20),
        "lgos_self": top(samples.lgos_self, 15),
        "leaf_lines": top(samples.leaf_lines, 20),
    }


def compare_markdown(lgos: dict[str, Any], baseline: dict[str, Any]) -> str:
    """Where LGOS spends server CPU per request that the baseline does not."""
    base = dict(baseline["by_package"])
    lines = [
        f"### {lgos['scenario']}: py-spy, {RATE} Hz, "
        f"{lgos['requests']} LGOS / {baseline['requests']} baseline requests",
        "",
        f"Server CPU per request from /proc: LGOS {lgos['ms_per_request']:.2f} ms, "
        f"baseline {baseline['ms_per_request']:.2f} ms (samples are scaled to "
        f"these; unscaled {lgos['sampled_ms_per_request']:.2f} and "
        f"{baseline['sampled_ms_per_request']:.2f} ms).",
        "",
        "| package (leaf frame) | LGOS ms/req | baseline ms/req | difference |",
        "|---|---|---|---|",
    ]
    for package, value in lgos["by_package"]:
        other = base.get(package, 0.0)
        lines.append(
            f"| {package} | {value:.3f} | {other:.3f} | {value - other:+.3f} |"
        )
    lines += [
        "",
        "| LGOS line (inclusive: on the stack) | ms/req |",
        "|---|---|",
        *(f"| `{where}` | {value:.3f} |" for where, value in lgos["lgos_lines"]),
        "",
        "| LGOS line (self: the frame running) | ms/req |",
        "|---|---|",
        *(f"| `{where}` | {value:.3f} |" for where, value in lgos["lgos_self"]),
        "",
        "| hottest leaf lines in LGOS's server | ms/req |",
        "|---|---|",
        *(f"| `{where}` | {value:.3f} |" for where, value in lgos["leaf_lines"]),
    ]
    return "\n".join(lines)
