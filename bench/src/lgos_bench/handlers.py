"""``lgos-bench handlers``: what counting usage over every model call costs
the graph alone, by the way the handler is attached, under callgrind.

No HTTP, no app: the plain graph run (``ainvoke``, or ``astream`` with the
stream modes a streaming server asks for) with

- ``none``: no handler (the floor);
- ``langchain``: LangChain's ``UsageMetadataCallbackHandler`` as shipped,
  in the run's config (not inline: its events go to the thread pool);
- ``same-work``: the same-work baseline's ``RunUsage`` (that handler,
  inline, skipping the events it does not use), in the run's config;
- ``lgos-config``: LGOS's ``UsageCollector`` in the run's config, as LGOS
  attached it before issue 48;
- ``lgos``: the collector as LGOS attaches it, held by ``counting`` for
  LangChain's configure hook.

Each is counted in a child process of its own, as ``instructions.py``
counts an app (the same flag files and ``callgrind_control``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from lgos_bench.instructions import counted_instructions
from lgos_bench.report import RESULTS_DIR, write_pair

WAYS = ("none", "langchain", "same-work", "lgos-config", "lgos")
_STREAM_MODES: Any = ["messages", "values"]

Attach = Callable[[], tuple[Any, contextlib.AbstractContextManager[Any]]]


def _ways() -> dict[str, Attach]:
    """Per run: its config and the block it runs in."""
    # Imported here: the parent process needs none of it.
    from langchain_core.callbacks import UsageMetadataCallbackHandler
    from langgraph_openai_serve.graph.usage import UsageCollector, counting

    from lgos_bench.baseline_app import RunUsage

    def in_config(handler: Any) -> Attach:
        return lambda: ({"callbacks": [handler()]}, contextlib.nullcontext())

    return {
        "none": lambda: (None, contextlib.nullcontext()),
        "langchain": in_config(UsageMetadataCallbackHandler),
        "same-work": in_config(RunUsage),
        "lgos-config": in_config(UsageCollector),
        "lgos": lambda: (None, counting(UsageCollector())),
    }


def count(way: str, stream: bool, runs: int) -> int:
    """Instructions per graph run with usage counted ``way``."""
    total = counted_instructions(
        "lgos_bench.handlers", [way, "stream" if stream else "json", str(runs)]
    )
    return total // runs


def count_all(runs: int, say: Callable[[str], None]) -> dict[str, dict[str, int]]:
    """Every way, non-streamed and streamed: {mode: {way: instructions}}."""
    table: dict[str, dict[str, int]] = {}
    for stream in (False, True):
        mode = "stream" if stream else "json"
        with ThreadPoolExecutor(max_workers=2) as pool:
            counts = list(pool.map(partial(count, stream=stream, runs=runs), WAYS))
        table[mode] = dict(zip(WAYS, counts, strict=True))
        say(f"  {mode}: " + ", ".join(f"{w} {n:,}" for w, n in table[mode].items()))
    return table


def markdown(table: dict[str, dict[str, int]]) -> str:
    lines = [
        "| attached | non-streamed run | over none | streamed run | over none |",
        "|---|---|---|---|---|",
    ]
    json_runs, streamed = table["json"], table["stream"]
    for way in WAYS:
        lines.append(
            f"| {way} | {json_runs[way]:,} | {json_runs[way] - json_runs['none']:+,} "
            f"| {streamed[way]:,} | {streamed[way] - streamed['none']:+,} |"
        )
    return "\n".join(lines)


def write(
    table: dict[str, dict[str, int]], runs: int, directory: Path = RESULTS_DIR
) -> tuple[Path, Path]:
    """``<timestamp>-handlers.md`` and ``.json`` in ``directory``."""
    from lgos_bench.suite import library_revision

    meta = {
        "mode": "handlers",
        "lgos_revision": library_revision(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "runs": runs,
    }
    results = {"meta": meta, "instructions": table}
    return write_pair(results, markdown(table), directory)


def _serve(way: str, stream: bool, runs: int, flag: Path) -> None:
    from langchain_core.messages import HumanMessage

    from lgos_bench.workload import PLAIN, Workload, build_graphs

    graph = build_graphs(Workload())[PLAIN]
    attach = _ways()[way]

    async def once() -> None:
        config, block = attach()
        inputs = {"messages": [HumanMessage(content="Say something long.")]}
        with block:
            if not stream:
                await graph.ainvoke(inputs, config)
                return
            async for _ in graph.astream(inputs, config, stream_mode=_STREAM_MODES):
                pass

    async def serve(times: int) -> None:
        for _ in range(times):
            await once()

    with asyncio.Runner() as runner:
        runner.run(serve(50))
        gc.collect()
        gc.freeze()  # as instructions.py: no full collection of the warm heap
        flag.with_suffix(".ready").touch()
        _until(flag.with_suffix(".go"))
        runner.run(serve(runs))
        flag.with_suffix(".done").touch()
        _until(flag.with_suffix(".stop"))


def _until(path: Path) -> None:
    while not path.exists():
        time.sleep(0.05)


if __name__ == "__main__":
    way_name, mode_name, n, flag_path = sys.argv[1:5]
    _serve(way_name, mode_name == "stream", int(n), Path(flag_path))
