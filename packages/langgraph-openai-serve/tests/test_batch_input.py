"""The input file's line checks, on lines given directly (the SDK tests
cover the same path through a real Files API): the line limit, blank lines,
and that nothing is kept once a line is wrong."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence

import pytest
from langgraph_openai_serve.batches.input import Limits, read_lines
from langgraph_openai_serve.batches.protocol import BatchLine

pytestmark = pytest.mark.anyio


def _line(custom_id: str, **body: object) -> str:
    return json.dumps(
        {
            "custom_id": custom_id,
            "method": "POST",
            "url": "/v1/responses",
            "body": {"model": "m", "input": "x", **body},
        }
    )


DEFAULT_LIMITS = Limits()


async def _read(texts: list[str], limits: Limits = DEFAULT_LIMITS):
    kept: list[BatchLine] = []

    async def lines() -> AsyncIterator[str]:
        for text in texts:
            yield text

    async def keep(group: Sequence[BatchLine]) -> None:
        kept.extend(group)

    found = await read_lines(
        lines(),
        endpoint="/v1/responses",
        known_model=lambda model: model == "m",
        keep=keep,
        limits=limits,
    )
    return found, kept


async def test_a_file_over_the_line_limit_fails_at_the_first_line_too_many() -> None:
    found, _ = await _read([_line(f"r{i}") for i in range(4)], Limits(lines=3))

    assert [(e["code"], e["line"]) for e in found.errors] == [("too_many_requests", 4)]


async def test_blank_lines_are_skipped_and_numbers_stay_the_files() -> None:
    found, kept = await _read([_line("a"), "", "   ", _line("b")])

    assert found.errors == []
    assert found.total == 2
    assert [(line.seq, line.number, line.custom_id) for line in kept] == [
        (0, 1, "a"),
        (1, 4, "b"),
    ]


async def test_an_empty_file_is_an_error() -> None:
    found, _ = await _read(["", ""])

    assert [e["code"] for e in found.errors] == ["empty_file"]


async def test_lines_after_an_error_are_checked_but_not_kept() -> None:
    found, kept = await _read(
        [_line("a"), _line("b", background=True), _line("c"), "[1]"]
    )

    assert [(e["code"], e["line"], e["param"]) for e in found.errors] == [
        ("invalid_request", 2, "body.background"),
        ("invalid_json_line", 4, None),
    ]
    assert kept == []
