"""What a hostile request body costs a real ``lgos serve``: its peak memory
(``VmHWM``) read before and after the body is refused.

pydantic records an error for every invalid element of a list, about 4.5 KB
each once converted, so a megabyte of ``{"input": [{},{},...]}`` took about
1.5 GB to refuse. The server counts the body's arrays and objects first
(``LGOS_MAX_JSON_ELEMENTS``, 10,000) and refuses more before validating.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from conftest import start_lgos_serve
from lgos_testkit import peak_rss_bytes, reset_peak_rss

MIB = 1024 * 1024
ELEMENTS = 10_000  # LGOS_MAX_JSON_ELEMENTS's default
GROWTH_AT_LIMIT = 64 * MIB
"""A body just under the limit, all of it invalid: its errors (about 45 MB
measured) and room for the allocator."""
GROWTH_PAST_LIMIT = 16 * MIB
"""A megabyte body past the limit: the body and a copy without its strings."""


def _empty_objects(count: int) -> bytes:
    return b'{"model": "m", "input": [' + b",".join([b"{}"] * count) + b"]}"


@pytest.fixture
def serve(tmp_path: Path):
    api = start_lgos_serve(tmp_path, "live_app:registry")
    try:
        yield api
    finally:
        api.process.stop()


def _growth(serve, body: bytes) -> tuple[httpx.Response, int]:
    pid = serve.process.pid
    reset_peak_rss(pid)
    before = peak_rss_bytes(pid)
    answer = httpx.post(
        f"{serve.base_url}/responses",
        content=body,
        headers={"content-type": "application/json"},
        timeout=120,
    )
    return answer, peak_rss_bytes(pid) - before


def test_a_body_of_many_invalid_elements_costs_the_limit_not_its_size(serve):
    past, past_growth = _growth(serve, _empty_objects(350_000))  # about 1 MiB
    at, at_growth = _growth(serve, _empty_objects(ELEMENTS - 10))

    assert past.status_code == 400, past.text
    assert past.json()["error"]["code"] == "json_too_many_elements"
    assert past_growth < GROWTH_PAST_LIMIT, past_growth / MIB
    # Under the limit the body is validated: refused for its items, at a
    # cost the limit bounds.
    assert at.status_code == 400, at.text
    assert at.json()["error"]["param"] is not None
    assert at_growth < GROWTH_AT_LIMIT, at_growth / MIB
