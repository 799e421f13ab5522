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


async def _read(
    texts: list[str],
    limits: Limits = DEFAULT_LIMITS,
    chunk: int = 7,
    *,
    end: str = "\n",
):
    """Read the file of ``texts`` (one a line; ``end`` after the last),
    arriving ``chunk`` bytes at a time."""
    kept: list[BatchLine] = []
    content = ("\n".join(texts) + end).encode()

    async def lines() -> AsyncIterator[bytes]:
        for start in range(0, len(content), chunk):
            yield content[start : start + chunk]

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


@pytest.mark.parametrize("chunk", [1, 7, 4096])
async def test_a_line_over_the_byte_cap_is_an_error_naming_it_wherever_it_is(
    chunk: int,
) -> None:
    first, last = _line("a"), _line("c")
    long = _line("b", input="x" * 200)
    limits = Limits(line_bytes=max(len(first), len(last)))

    found, _ = await _read([first, long, last, long], limits, chunk=chunk)

    assert [(e["code"], e["line"]) for e in found.errors] == [
        ("line_too_large", 2),
        ("line_too_large", 4),
    ]
    assert found.errors[0]["message"] == (
        f"The line is {len(long)} bytes long, over the limit of "
        f"{limits.line_bytes} bytes."
    )
    assert found.total == 2  # the lines around them were read and checked


async def test_a_last_line_over_the_cap_without_a_newline_is_named_too() -> None:
    found, _ = await _read(
        [_line("a"), "[" * 100 + "]" * 100], Limits(line_bytes=150), end=""
    )

    assert [(e["code"], e["line"]) for e in found.errors] == [("line_too_large", 2)]


async def test_a_body_nested_past_the_depth_limit_is_an_error_of_its_line() -> None:
    def nested(depth: int) -> dict[str, object]:
        value: dict[str, object] = {}
        for _ in range(depth - 1):
            value = {"a": value}
        return value

    at_limit = json.loads(_line("a"))
    at_limit["body"]["metadata"] = nested(4)  # the body's depth: 5
    past = json.loads(_line("b"))
    past["body"]["metadata"] = nested(5)
    hostile = "[" * 100_000 + "]" * 100_000  # what json.loads cannot recurse into

    found, _ = await _read(
        [json.dumps(at_limit), json.dumps(past), hostile], Limits(depth=5)
    )

    assert [(e["code"], e["line"]) for e in found.errors] == [
        ("json_too_deep", 2),
        ("json_too_deep", 3),
    ]
    assert "deeper than 5 levels" in found.errors[0]["message"]


async def test_only_a_newline_ends_a_line() -> None:
    # JSON strings may hold U+2028 and form feeds raw; CRLF files are fine.
    odd = _line("a", input="one\u2028two\x0cthree")

    found, kept = await _read([odd + "\r", _line("b")])

    assert found.errors == []
    assert [(line.number, line.custom_id) for line in kept] == [(1, "a"), (2, "b")]
    assert json.loads(kept[0].body)["input"] == "one\u2028two\x0cthree"


async def test_errors_quote_a_lines_long_values_cut_short() -> None:
    # Up to 100 errors are kept and answered: none may carry a line's megabyte.
    long = "v" * 100_000
    lines = [
        _line(long),
        _line(long),  # duplicate custom_id
        json.dumps({**json.loads(_line("b")), "url": long}),
        json.dumps({**json.loads(_line("c")), long: 1}),
        _line("d", model=long),
    ]

    found, _ = await _read(lines)

    assert [e["code"] for e in found.errors] == [
        "duplicate_custom_id",
        "mismatched_endpoint",
        "invalid_request",
        "model_not_found",
    ]
    assert all(len(e["message"]) < 200 for e in found.errors)
    assert all(len(e["param"]) < 100 for e in found.errors)


async def test_long_lines_go_to_the_store_a_few_megabytes_at_a_time() -> None:
    big = "x" * (900 * 1024)
    groups: list[int] = []

    async def content() -> AsyncIterator[bytes]:
        for i in range(12):
            yield (_line(f"r{i}", input=big) + "\n").encode()

    async def keep(group: Sequence[BatchLine]) -> None:
        groups.append(sum(len(line.body) for line in group))

    found = await read_lines(
        content(),
        endpoint="/v1/responses",
        known_model=lambda model: True,
        keep=keep,
        limits=DEFAULT_LIMITS,
    )

    assert found.total == 12
    assert len(groups) > 2
    assert max(groups) < 5 * 1024 * 1024
