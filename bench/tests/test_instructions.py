"""Instruction counts under callgrind: a figure a loaded machine cannot move."""

from __future__ import annotations

import dataclasses
import shutil

import pytest
from lgos_bench.instructions import count, markdown

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
