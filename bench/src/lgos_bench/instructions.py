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
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from lgos_bench.alternate import serve_batch
from lgos_bench.compare import Side
from lgos_bench.report import RESULTS_DIR, write_pair
from lgos_bench.scenarios import APIS, Api, target
from lgos_bench.suite import run_meta
from lgos_bench.targets import pair_limit
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
    """The side's label: ``baseline``, ``lgos:LGOS_X=y`` ..."""
    requests: int
    per_request: int
    concurrency: int = 1


def valgrind_tools() -> tuple[str, str]:
    """``valgrind`` and ``callgrind_control``, or a clear error."""
    valgrind = shutil.which("valgrind")
    control = shutil.which("callgrind_control")
    if valgrind is None or control is None:
        raise RuntimeError(
            "instruction counts need valgrind (Debian: apt-get install -y valgrind)"
        )
    return valgrind, control


def count(
    app: str | Side,
    api: str,
    stream: bool,
    requests: int,
    *,
    concurrency: int = 1,
    database_url: str | None = None,
) -> Count:
    """Run ``requests`` requests of ``app`` under callgrind, ``concurrency``
    at a time; count them. LGOS sides get ``database_url`` unless they set
    ``LGOS_DATABASE_URL`` themselves."""
    side = Side.parse(app) if isinstance(app, str) else app
    label = side.label
    if database_url is not None:
        side = side.with_default("LGOS_DATABASE_URL", database_url)
    mode = "stream" if stream else "json"
    total = counted_instructions(
        "lgos_bench.instructions",
        [side.app, api, mode, str(requests)],
        [str(concurrency)],
        env=dict(side.env),
    )
    per_request = total // requests
    return Count(f"{api}/{mode}/plain", label, requests, per_request, concurrency)


def counted_instructions(
    module: str,
    args: Sequence[str],
    after_flag: Sequence[str] = (),
    *,
    env: dict[str, str] | None = None,
) -> int:
    """Instructions the child ``python -m module *args FLAG *after_flag``
    runs between touching ``FLAG.ready`` and ``FLAG.done`` (callgrind counts
    only while it is switched on: not the imports, not the warm-up).

    The child waits for ``FLAG.go`` before its counted work and for
    ``FLAG.stop`` before it exits."""
    valgrind, control = valgrind_tools()
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
            module,
            *args,
            str(flag),
            *after_flag,
        ]
        log = Path(folder) / "child.log"
        with log.open("wb") as sink:
            child = subprocess.Popen(
                argv,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})},
            )
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
    return int(totals[1])


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
    *,
    sides: tuple[Side, ...] | None = None,
    concurrency: int = 1,
    database_url: str | None = None,
) -> list[Count]:
    """Every side (the apps of ``APPS`` unless given) on each (API, streamed)
    of ``scenarios``, plain graph; every API, streaming and not, by default."""
    chosen = sides or tuple(Side(app) for app in APPS)
    counts: list[Count] = []
    for api, stream in scenarios:
        one = partial(
            count,
            api=api,
            stream=stream,
            requests=requests,
            concurrency=concurrency,
            database_url=database_url,
        )
        # The children run side by side: counts do not depend on it.
        with ThreadPoolExecutor(max_workers=len(chosen)) as pool:
            row = list(pool.map(one, chosen))
        counts += row
        say(
            f"  {row[0].key:<24} instructions/request "
            + ", ".join(f"{c.app} {c.per_request:,}" for c in row)
        )
    return counts


def markdown(counts: list[Count]) -> str:
    """The three apps' table, or two sides' (B, the second, against A)."""
    if {item.app for item in counts} != set(APPS):
        return _pair_markdown(counts)
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
        bound = pair_limit("baseline-usage", "lgos", stream="/stream/" in key)
        assert bound is not None
        met = "yes" if ratio <= bound else "no"
        lines.append(
            f"| {key} | {base:,} | {same:,} | {lgos:,} | {ratio:.3f}× "
            f"| <= {bound:.2f}× | {met} | {lgos / base:.3f}× |"
        )
    return "\n".join(lines)


def _pair_markdown(counts: list[Count]) -> str:
    a, b = counts[0].app, counts[1].app
    lines = [
        f"A = `{a}`, B = `{b}`, {counts[0].concurrency} request(s) at a time.",
        "",
        "| scenario | A instr/req | B instr/req | B/A | limit | met |",
        "|---|---|---|---|---|---|",
    ]
    for first, second in zip(counts[::2], counts[1::2], strict=True):
        ratio = second.per_request / first.per_request
        stream = "/stream/" in first.key
        bound = pair_limit(a, b, stream=stream, concurrency=first.concurrency)
        cells = ["", ""]
        if bound is not None:
            cells = [f"<= {bound:.2f}×", "yes" if ratio <= bound else "no"]
        lines.append(
            f"| {first.key} | {first.per_request:,} | {second.per_request:,} "
            f"| {ratio:.3f}× | {' | '.join(cells)} |"
        )
    return "\n".join(lines)


def results(counts: list[Count], *, postgres: bool) -> dict[str, Any]:
    """The counts and how they were taken, as ``write`` stores them."""
    return {
        "meta": run_meta("instructions", postgres=postgres),
        "counts": [
            {
                "key": item.key,
                "side": item.app,
                "requests": item.requests,
                "concurrency": item.concurrency,
                "per_request": item.per_request,
            }
            for item in counts
        ],
    }


def write(
    counts: list[Count], *, postgres: bool, directory: Path = RESULTS_DIR
) -> tuple[Path, Path]:
    """``<timestamp>-instructions.md`` and ``.json`` in ``directory``."""
    return write_pair(results(counts, postgres=postgres), markdown(counts), directory)


def _serve(
    app_name: str, api: Api, mode: str, requests: int, flag: Path, concurrency: int
) -> None:
    # Imported here: the parent process needs none of the serving stack.
    from lgos_bench.inprocess import APPS as FACTORIES
    from lgos_bench.inprocess import call_app

    app = FACTORIES[app_name](Workload.from_env())
    request = target(api, PLAIN, stream=mode == "stream")

    async def serve(times: int) -> None:
        await serve_batch(partial(call_app, app, request), times, concurrency)

    with asyncio.Runner() as runner:
        lifespan = AsyncExitStack()
        runner.run(lifespan.enter_async_context(app.router.lifespan_context(app)))
        runner.run(serve(50))  # lazy imports, caches, first-call paths
        # As in process (``alternate.py``): what is alive after the warm-up
        # is frozen, so a full collection during the count scans only what
        # the requests left, not the whole heap at a moment chance decides.
        gc.collect()
        gc.freeze()
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
    name, api_name, mode_name, n, flag_path, at_once = sys.argv[1:7]
    if api_name not in APIS:
        raise SystemExit(f"unknown API {api_name!r}")
    api: Api = "chat" if api_name == "chat" else "responses"
    _serve(name, api, mode_name, int(n), Path(flag_path), int(at_once))
