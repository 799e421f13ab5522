"""``lgos-bench layers``: where a non-streamed request's CPU goes, the graph
run or the server around it, in LGOS and in the same-work baseline.

``lgos-bench inprocess`` judges whole requests. This mode alternates the same
two apps the same way (``alternate.py``) and splits each request's CPU in two:

- **graph**: from the first step of ``Pregel.astream`` to its end: LangGraph,
  the model, the usage handler and every callback. Both servers run the same
  graph, so this part shows what each one's way of starting the run costs;
- **rest**: everything else the request costs: the ASGI stack, reading and
  validating the body, building the run, the answer's objects, encoding,
  metrics. This is the server's own work.

Only non-streamed requests: a streamed request's encoder runs between the
graph's steps, inside that span, so the split would not separate the two.
The clock is the one ``alternate`` charges (``time.process_time``); reading
it twice more per request costs both sides the same.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from langgraph.pregel import Pregel

from lgos_bench.alternate import WARMUP_CALLS, Batches, alternate, ratio_spread
from lgos_bench.compare import Side, started
from lgos_bench.inprocess import call_app
from lgos_bench.load import Target
from lgos_bench.report import RESULTS_DIR, write_pair
from lgos_bench.scenarios import APIS, target
from lgos_bench.suite import run_meta, run_preamble
from lgos_bench.workload import DEFAULT_TOKENS, PLAIN, Workload

Log = Callable[[str], None]

ROUNDS = 1000
QUICK_ROUNDS = 40
SIDES = ("baseline-usage", "lgos")
"""The same-work baseline and LGOS, as ``lgos-bench inprocess`` judges them."""


class GraphClock:
    """CPU seconds spent inside ``Pregel.astream`` spans while ``timing``."""

    def __init__(self) -> None:
        self.seconds = 0.0

    @contextmanager
    def timing(self) -> Iterator[None]:
        """Time every graph run started in the block (``Pregel.astream``, which
        ``ainvoke`` uses too)."""
        original = Pregel.astream
        clock = self

        def astream(
            graph: Pregel[Any, Any, Any, Any], *args: Any, **kwargs: Any
        ) -> AsyncIterator[Any]:
            return clock._timed(original(graph, *args, **kwargs))

        Pregel.astream = astream  # type: ignore[assignment, method-assign]
        try:
            yield
        finally:
            Pregel.astream = original  # type: ignore[method-assign]

    async def _timed(self, parts: AsyncIterator[Any]) -> AsyncIterator[Any]:
        started = time.process_time()
        try:
            async for part in parts:
                yield part
        finally:
            self.seconds += time.process_time() - started


async def _measure(rounds: int, tokens: int, log: Log) -> list[dict[str, Any]]:
    clock = GraphClock()
    graph_seconds = dict.fromkeys(SIDES, 0.0)
    rows = []

    async def one(side: str, app: FastAPI, request: Target) -> None:
        before = clock.seconds
        await call_app(app, request)
        graph_seconds[side] += clock.seconds - before

    async with AsyncExitStack() as stack:
        workload = Workload(tokens=tokens)
        apps = {
            side: await started(Side.parse(side), workload, stack) for side in SIDES
        }
        with clock.timing():
            for api in APIS:
                request = target(api, PLAIN, stream=False)
                calls = {
                    side: partial(one, side, app, request) for side, app in apps.items()
                }
                for call in calls.values():
                    for _ in range(WARMUP_CALLS):
                        await call()
                graph_seconds.update(dict.fromkeys(SIDES, 0.0))
                measured = await alternate(calls, rounds=rounds, warmup=0)
                row = _row(f"{api}/json/plain", measured, graph_seconds)
                log(_progress(row))
                rows.append(row)
    return rows


def _row(
    key: str, measured: dict[str, Batches], graph_seconds: dict[str, float]
) -> dict[str, Any]:
    sides = {}
    for side in SIDES:
        rounds = len(measured[side].cpu)
        total = measured[side].cpu_ms
        graph = 1000 * graph_seconds[side] / rounds
        sides[side] = {"cpu_ms": total, "graph_ms": graph, "rest_ms": total - graph}
    baseline, lgos = (sides[side] for side in SIDES)
    return {
        "key": key,
        "sides": sides,
        "ratio": ratio_spread(measured["lgos"], measured["baseline-usage"]),
        "graph_ratio": lgos["graph_ms"] / baseline["graph_ms"],
        "rest_ratio": lgos["rest_ms"] / baseline["rest_ms"],
    }


def _progress(row: dict[str, Any]) -> str:
    baseline, lgos = (row["sides"][side] for side in SIDES)
    return (
        f"  {row['key']:22} graph ms {baseline['graph_ms']:.3f} -> "
        f"{lgos['graph_ms']:.3f} ({row['graph_ratio']:.3f}x), rest ms "
        f"{baseline['rest_ms']:.3f} -> {lgos['rest_ms']:.3f} "
        f"({row['rest_ratio']:.3f}x); whole {row['ratio']['ratio']:.3f}x"
    )


def run(
    log: Log, *, rounds: int = ROUNDS, tokens: int = DEFAULT_TOKENS
) -> dict[str, Any]:
    """Alternate the same-work baseline and LGOS ``rounds`` times per API,
    the model answering ``tokens`` tokens."""
    meta = run_meta(
        "layers",
        rounds=rounds,
        tokens=tokens,
    )
    log(f"layers: {rounds} alternated rounds per API, non-streamed, plain graph")
    rows = asyncio.run(_measure(rounds, tokens, log))
    return {"meta": meta, "rows": rows}


def render(results: dict[str, Any]) -> str:
    meta = results["meta"]
    lines = [
        "# lgos-bench: a non-streamed request's CPU, graph and rest",
        "",
        run_preamble(meta)
        + f" {meta['rounds']} rounds per API ({meta['tokens']} tokens), the "
        "same-work baseline and LGOS "
        "alternated in this process. Graph: the CPU inside the graph run "
        "(`Pregel.astream`); rest: the rest of the request.",
        "",
        "| scenario | baseline graph ms | LGOS graph ms | graph LGOS / baseline "
        "| baseline rest ms | LGOS rest ms | rest LGOS / baseline "
        "| whole LGOS / baseline |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in results["rows"]:
        baseline, lgos = (row["sides"][side] for side in SIDES)
        lines.append(
            f"| {row['key']} | {baseline['graph_ms']:.3f} | {lgos['graph_ms']:.3f} "
            f"| {row['graph_ratio']:.3f}× | {baseline['rest_ms']:.3f} "
            f"| {lgos['rest_ms']:.3f} | {row['rest_ratio']:.3f}× "
            f"| {row['ratio']['ratio']:.3f}× |"
        )
    return "\n".join(lines)


def write(results: dict[str, Any], directory: Path = RESULTS_DIR) -> tuple[Path, Path]:
    """``<timestamp>-layers.md`` and ``.json`` in ``directory``."""
    return write_pair(results, render(results), directory)
