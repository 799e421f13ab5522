"""Instruction counts under callgrind: a figure a loaded machine cannot move."""

from __future__ import annotations

import dataclasses
import shutil

import pytest
from lgos_bench.handlers import WAYS
from lgos_bench.handlers import markdown as handlers_markdown
from lgos_bench.instructions import Count, count, markdown

pytestmark = pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="valgrind is not installed"
)


def test_counts_are_per_request_and_repeatable():
    # Two runs of different lengths must agree per request: the count covers
    # the requests, not the start-up or the polling around them.
    short = count("baseline", "chat", False, 3)
    longer = count("baseline", "chat", False, 6)

    assert short.key == "chat/json/plain"
    assert short.per_request > 100_000
    assert abs(longer.per_request - short.per_request) < 0.05 * short.per_request
    same_work = dataclasses.replace(short, app="baseline-usage", per_request=1000)
    lgos = dataclasses.replace(short, app="lgos", per_request=1040)
    table = markdown([short, same_work, lgos])
    assert f"| chat/json/plain | {short.per_request:,} | 1,000 | 1,040 | 1.040× " in (
        table
    )
    assert "| <= 1.05× | yes |" in table


def test_a_sides_settings_reach_the_counted_child():
    # A store LGOS does not know fails the app's start in the child (whose
    # settings errors name the field, never the value given).
    with pytest.raises(RuntimeError, match="RESPONSE_STORE\n  Input should be"):
        count("lgos:LGOS_RESPONSE_STORE=nonsense", "chat", False, 2)


def test_kept_responses_are_judged_at_concurrency_8_only():
    def pair(concurrency: int) -> str:
        return markdown(
            [
                Count("responses/json/plain", "lgos", 8, 1000, concurrency),
                Count(
                    "responses/json/plain",
                    "lgos:LGOS_RESPONSE_STORE=postgres",
                    8,
                    1090,
                    concurrency,
                ),
            ]
        )

    assert "| responses/json/plain | 1,000 | 1,090 | 1.090× | <= 1.10× | yes |" in (
        pair(8)
    )
    assert "| 1.090× |  |  |" in pair(1)


def test_the_handlers_table_gives_each_way_over_no_handler():
    table = {
        "json": dict(zip(WAYS, (100, 300, 130, 140, 120), strict=True)),
        "stream": dict(zip(WAYS, (1000, 3000, 1300, 1400, 1200), strict=True)),
    }

    text = handlers_markdown(table)

    assert "| lgos | 120 | +20 | 1,200 | +200 |" in text
    assert "| none | 100 | +0 | 1,000 | +0 |" in text
