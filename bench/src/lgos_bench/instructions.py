"""Instructions per request, counted by valgrind's callgrind: a figure the
rest of the machine cannot move.

CPU time per request drifts with whatever else the machine runs; the number
of instructions one request executes does not. Each app (the plain
baseline, the same-work baseline that counts usage over every model call
with LangChain's usage handler, LGOS) runs in its own child process under
``callgrind --instr-atstart=no``: the child imports, builds the app and
warms it up uninstrumented, then says it is ready; the parent switches
instrumentation on with ``callgrind_control``, the child serves N requests
in process (``inprocess.call_app``, no sockets), and the parent switches it
off again. Counted: N requests plus a few
hundred instructions of the child's polling loop.

Run it with ``lgos-bench instructions`` (valgrind from Debian's package).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

from lgos_bench.scenarios import APIS, Api, target
from lgos_bench.targets import SAME_WORK_JSON_LIMIT, SAME_WORK_STREAM_LIMIT
from lgos_bench.workload import PLAIN, Workload

_TOTALS = re.compile(r"^totals:\s+(\d+)", re.MULTILINE)
_WAIT_SECONDS = 1800.0
"""A hang guard: 200 streamed requests under callgrind took over 300 s
beside a dozen busy processes."""


ALL_SCENARIOS: tuple[tuple[Api, bool], ...] = tuple(
    (api, stream) for api in APIS for stream in (False, True)
)
"""(API, streamed) pairs counted by default: every API, streaming and not."""
APPS = ("baseline", "baseline-usage", "lgos")
"""Counted for every scenario: LGOS is judged against the same-work baseline
(``baseline-usage``), the plain one given beside it."""


@dataclass(frozen=True)
class Count:
    """Instructions per request of one app on one API and mode."""

    key: str
    app: str
    requests: int
    per_request: int


def valgrind_tools() -> tuple[str, str]:
    """``valgrind`` and ``callgrind_control``, or a clear error."""
    valgrind = shutil.which("valgrind")
    control = shutil.which("callgrind_control")
    if valgrind is None or control is None:
        raise RuntimeError(
            "instruction counts need valgrind (Debian: apt-get install -y valgrind)"
        )
    return valgrind, control


def count(app: str, api: str, stream: bool, requests: int) -> Count:
    """Run ``requests`` requests of ``app`` under callgrind; count them."""
    valgrind, control = valgrind_tools()
    mode = "stream" if stream else "json"
    with tempfile.TemporaryDirectory(prefix="lgos-callgrind-") as folder:
        flag = Path(folder) / "flag"
        out = Path(folder) / "callgrind.out"
        argv = [
            valgrind,
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "lgos_bench.instructions",
            app,
            api,
            mode,
            str(requests),
            str(flag),
        ]
        log = Path(folder) / "child.log"
        with log.open("wb") as sink:
            child = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)
            try:
                _wait_for(flag.with_suffix(".ready"), child, log)
                _switch(control, child.pid, "on")
                flag.with_suffix(".go").touch()
                _wait_for(flag.with_suffix(".done"), child, log)
                _switch(control, child.pid, "off")
                flag.with_suffix(".stop").touch()
                if child.wait(timeout=_WAIT_SECONDS) != 0:
                    raise RuntimeError(f"callgrind child failed:\n{log.read_text()}")
            finally:
                if child.poll() is None:
                    child.kill()
                    child.wait()
        totals = _TOTALS.search(out.read_text())
        if totals is None:
            raise RuntimeError(f"no instruction total in {out}")
    return Count(f"{api}/{mode}/plain", app, requests, int(totals[1]) // requests)


def _switch(control: str, pid: int, state: str) -> None:
    # callgrind_control chats on both streams; keep them for a failure only.
    result = subprocess.run(
        [control, "-i", state, str(pid)],
        capture_output=True,
        text=True,
        timeout=_WAIT_SECONDS,
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"callgrind_control -i {state} failed:\n{result.stdout}{result.stderr}"
        )


def _wait_for(path: Path, child: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + _WAIT_SECONDS
    while not path.exists():
        if child.poll() is not None:
            raise RuntimeError(f"callgrind child exited early:\n{log.read_text()}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"callgrind child never wrote {path.name}")
        time.sleep(0.2)


def count_all(
    requests: int,
    say: Callable[[str], None] = lambda _: None,
    scenarios: tuple[tuple[Api, bool], ...] = ALL_SCENARIOS,
) -> list[Count]:
    """Every app of ``APPS`` on each (API, streamed) of ``scenarios``, plain
    graph; every API, streaming and not, by default."""
    counts: list[Count] = []
    for api, stream in scenarios:
        # The children run side by side: counts do not depend on it.
        n = len(APPS)
        with ThreadPoolExecutor(max_workers=n) as pool:
            row = list(pool.map(count, APPS, [api] * n, [stream] * n, [requests] * n))
        counts += row
        say(
            f"  {row[0].key:<24} instructions/request "
            + ", ".join(f"{c.app} {c.per_request:,}" for c in row)
        )
    return counts


def limit(key: str) -> float:
    """Issue 48's bound on LGOS against the same-work baseline."""
    return SAME_WORK_STREAM_LIMIT if "/stream/" in key else SAME_WORK_JSON_LIMIT


def markdown(counts: list[Count]) -> str:
    lines = [
        "| scenario | baseline instr/req | same-work baseline instr/req "
        "| LGOS instr/req | LGOS / same-work | limit | met | LGOS / baseline |",
        "|---|---|---|---|---|---|---|---|",
    ]
    by_key: dict[str, dict[str, int]] = {}
    for item in counts:
        by_key.setdefault(item.key, {})[item.app] = item.per_request
    for key, apps in by_key.items():
        base, same, lgos = (apps[app] for app in APPS)
        ratio = lgos / same
        met = "yes" if ratio <= limit(key) else "no"
        lines.append(
            f"| {key} | {base:,} | {same:,} | {lgos:,} | {ratio:.3f}× "
            f"| <= {limit(key):.2f}× | {met} | {lgos / base:.3f}× |"
        )
    return "\n".join(lines)


def _serve(app_name: str, api: Api, mode: str, requests: int, flag: Path) -> None:
    # Imported here: the parent process needs none of the serving stack.
    from lgos_bench.inprocess import APPS, call_app

    app = APPS[app_name](Workload.from_env())
    request = target(api, PLAIN, stream=mode == "stream")

    async def serve(times: int) -> None:
        for _ in range(times):
            await call_app(app, request)

    with asyncio.Runner() as runner:
        lifespan = AsyncExitStack()
        runner.run(lifespan.enter_async_context(app.router.lifespan_context(app)))
        runner.run(serve(50))  # lazy imports, caches, first-call paths
        flag.with_suffix(".ready").touch()
        _until(flag.with_suffix(".go"))
        runner.run(serve(requests))
        flag.with_suffix(".done").touch()
        _until(flag.with_suffix(".stop"))
        runner.run(lifespan.aclose())


def _until(path: Path) -> None:
    # Sleeping, not spinning: the count includes only a few wake-ups.
    while not path.exists():
        time.sleep(0.05)


if __name__ == "__main__":
    name, api_name, mode_name, n, flag_path = sys.argv[1:6]
    if api_name not in APIS:
        raise SystemExit(f"unknown API {api_name!r}")
    api: Api = "chat" if api_name == "chat" else "responses"
    _serve(name, api, mode_name, int(n), Path(flag_path))
