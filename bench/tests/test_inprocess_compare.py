"""``lgos-bench inprocess``: two or three apps alternated in this process.

No timing threshold is asserted (a loaded CI machine's figures mean
nothing); what must hold is the arithmetic of the spread, that each side is
built with its own settings, and that a quick run reports every scenario.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from lgos_bench.alternate import Batches, alternate, ratio_spread
from lgos_bench.compare import (
    DEFAULT_KEYS,
    DEFAULT_SIDES,
    Plan,
    Side,
    alternate_pairs,
    parse_sides,
    started,
    targets,
)
from lgos_bench.workload import Workload


def _batches(*cpu: float) -> Batches:
    return Batches(cpu=cpu, wall=cpu)


def test_the_ratio_is_of_total_cpu_with_its_spread_over_tenths_of_the_run() -> None:
    # B costs 1.1x A in the first half of the run and 1.3x in the second.
    a = _batches(*[1.0] * 20)
    b = _batches(*[1.1] * 10, *[1.3] * 10)

    spread = ratio_spread(b, a)

    assert spread["ratio"] == pytest.approx(1.2)
    assert spread["blocks"] == 10
    assert spread["block_min"] == pytest.approx(1.1)
    assert spread["block_max"] == pytest.approx(1.3)
    assert 1.1 <= spread["ci_low"] < 1.2 < spread["ci_high"] <= 1.3


def test_sides_alternate_and_each_batch_is_charged_to_its_side() -> None:
    order: list[str] = []

    def call(name: str):  # type: ignore[no-untyped-def]
        async def once() -> None:
            order.append(name)

        return once

    measured = asyncio.run(
        alternate({"a": call("a"), "b": call("b")}, rounds=4, warmup=1)
    )

    assert order == ["a", "b", "a", "b", "b", "a", "a", "b", "b", "a"]
    assert len(measured["a"].cpu) == len(measured["b"].cpu) == 4


def test_a_side_names_lgos_settings_by_their_environment_names() -> None:
    side = Side.parse('lgos:LGOS_RESPONSE_STORE=memory,LGOS_CORS_ORIGINS=["a","b"]')

    assert side.env == (
        ("LGOS_RESPONSE_STORE", "memory"),
        ("LGOS_CORS_ORIGINS", '["a","b"]'),
    )
    assert Side.parse("baseline") == Side("baseline")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("lgos:LGOS_RESPONSE_STOR=memory", "LGOS_RESPONSE_STOR is not an LGOS setting"),
        ("lgos:RESPONSE_STORE=memory", "expected LGOS_NAME=value"),
        ("baseline:LGOS_RESPONSE_STORE=memory", "the baseline takes no settings"),
        ("fastapi", "a side is 'baseline', 'baseline-usage', 'lgos'"),
        ("baseline-usage:LGOS_X=1", "the baseline takes no settings"),
    ],
)
def test_a_misspelt_side_is_refused_with_the_reason(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        Side.parse(text)


def test_each_side_is_built_with_its_own_settings() -> None:
    async def stores() -> list[object]:
        async with AsyncExitStack() as stack:
            sides = [Side("lgos"), Side.parse("lgos:LGOS_RESPONSE_STORE=memory")]
            apps = [await started(side, Workload(tokens=4), stack) for side in sides]
            return [_openai_state(app).responses for app in apps]

    plain, kept = asyncio.run(stores())

    assert plain is None
    assert kept is not None


def _openai_state(app):  # type: ignore[no-untyped-def]
    (mount,) = [route for route in app.routes if getattr(route, "name", "") == "openai"]
    return mount.app.state.lgos


def test_two_sides_or_a_reference_and_two_are_accepted() -> None:
    assert [s.app for s in parse_sides(("baseline-usage", "lgos"))] == [
        "baseline-usage",
        "lgos",
    ]
    assert len(parse_sides(DEFAULT_SIDES)) == 3
    with pytest.raises(ValueError, match="two sides"):
        parse_sides(("lgos",))


def test_the_reference_never_runs_between_the_judged_sides() -> None:
    # A side runs faster right after one that shares its code: the plain
    # baseline in A and B's rounds would warm the same-work baseline (A).
    order: list[str] = []

    def side(name: str):  # type: ignore[no-untyped-def]
        async def call() -> None:
            order.append(name)

        return call

    calls = {name: side(name) for name in "rab"}
    measured = asyncio.run(alternate_pairs(calls, Plan(rounds=6)))

    judged = order[: order.index("r")]
    assert sorted(judged) == ["a"] * (20 + 6) + ["b"] * (20 + 6)
    assert set(order[len(judged) :]) == {"r", "b"}
    assert {name: len(runs.cpu) for name, runs in measured.items()} == dict.fromkeys(
        ("a", "b", "r", "rb"), 6
    )


def test_lgos_is_judged_against_the_same_work_baseline_streamed_or_not() -> None:
    meta = {"a": "baseline-usage", "b": "lgos", "concurrency": 1}
    rows = [
        {"key": "chat/json/plain", "stream": False, "ratio": {"ratio": 1.04}},
        {"key": "chat/stream/plain", "stream": True, "ratio": {"ratio": 1.01}},
    ]

    judged = targets(meta, rows, None)

    assert [(t["limit"], t["met"]) for t in judged] == [(1.05, True), (1.0, False)]


def test_a_quick_run_reports_every_scenario_and_the_targets(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "lgos_bench", "inprocess", "--quick"]
    subprocess.run(
        [*command, "--out", str(tmp_path), "--tokens", "8"],
        check=True,
        timeout=170,
    )

    (data,) = tmp_path.glob("*-inprocess.json")
    (markdown,) = tmp_path.glob("*-inprocess.md")
    results = json.loads(data.read_text())
    assert [row["key"] for row in results["rows"]] == list(DEFAULT_KEYS)
    for row in results["rows"]:
        assert row["a_cpu_ms"] > 0
        assert row["b_cpu_ms"] > 0
        assert row["reference"]["cpu_ms"] > 0
        for spread in (row["ratio"], row["reference"]["ratio"]):
            assert spread["ci_low"] <= spread["ratio"] <= spread["ci_high"]
    assert [t["scenario"] for t in results["targets"]] == list(DEFAULT_KEYS)
    text = markdown.read_text()
    assert "B = `lgos` against A = `baseline-usage` and R = `baseline`" in text
    assert "| chat/json/plain |" in text
