"""``lgos-bench layers``: a non-streamed request's CPU split into the graph
run and the rest, for the same-work baseline and LGOS.

No timing threshold between the servers is asserted (a loaded CI machine's
figures mean nothing); what must hold is that the graph clock counts the
graph run and nothing around it, and that a run reports both APIs with the
plain graph's run as the larger part of each request.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, TypedDict

from langchain_core.messages import HumanMessage
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel
from lgos_bench import layers


class _State(TypedDict):
    messages: list[Any]


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def _busy_graph(seconds: float) -> Pregel:
    def node(state: _State) -> _State:
        _burn(seconds)
        return state

    builder = StateGraph(_State)
    builder.add_node("busy", node)
    builder.set_entry_point("busy")
    builder.set_finish_point("busy")
    return builder.compile()


def test_the_graph_clock_counts_the_graph_run_and_not_the_work_around_it() -> None:
    graph = _busy_graph(0.05)
    clock = layers.GraphClock()
    original = Pregel.astream

    async def request() -> None:
        _burn(0.2)  # the server's own work, before and after the run
        await graph.ainvoke({"messages": [HumanMessage(content="hi")]})
        _burn(0.2)

    with clock.timing():
        asyncio.run(request())

    assert 0.05 <= clock.seconds < 0.2
    assert Pregel.astream is original


def test_a_run_splits_each_apis_request_into_graph_and_rest() -> None:
    said: list[str] = []

    results = layers.run(said.append, rounds=10, tokens=64)

    rows = results["rows"]
    assert [row["key"] for row in rows] == ["chat/json/plain", "responses/json/plain"]
    for row in rows:
        for side in ("baseline-usage", "lgos"):
            figures = row["sides"][side]
            # A plain run of 64 tokens is most of a request for either server.
            assert figures["graph_ms"] > figures["rest_ms"] > 0
    markdown = layers.render(results)
    assert "| chat/json/plain |" in markdown
    assert "| responses/json/plain |" in markdown
    assert len(said) == 3


def test_the_report_gives_each_part_and_its_ratio() -> None:
    side = {"cpu_ms": 1.7, "graph_ms": 1.4, "rest_ms": 0.3}
    lgos = {"cpu_ms": 1.75, "graph_ms": 1.36, "rest_ms": 0.39}
    results = {
        "meta": {
            "mode": "layers",
            "lgos_revision": "abc1234",
            "background_cores_before": 0.0,
            "started": "2026-12-05T03:00:00+0000",
            "rounds": 1000,
            "tokens": 64,
        },
        "rows": [
            {
                "key": "responses/json/plain",
                "sides": {"baseline-usage": side, "lgos": lgos},
                "ratio": {"ratio": 1.029},
                "graph_ratio": 1.36 / 1.4,
                "rest_ratio": 1.3,
            }
        ],
    }

    markdown = layers.render(results)

    assert (
        "| responses/json/plain | 1.400 | 1.360 | 0.971× | 0.300 | 0.390 "
        "| 1.300× | 1.029× |" in markdown
    )
