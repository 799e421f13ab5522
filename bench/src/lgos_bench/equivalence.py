"""Checks that the baseline sends what LGOS sends, so the comparison is fair.

For every graph, API and mode, one answer from each server is normalised
(generated ids and timestamps replaced) and parsed: SSE bodies into their list
of JSON payloads, JSON bodies into one object. The parsed forms must be equal;
the byte sizes are reported beside them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from lgos_bench.scenarios import APIS, VARIANTS, target
from lgos_bench.workload import PLAIN

_IDS = re.compile(rb"(chatcmpl|resp|msg|fc)[-_][0-9a-f]{32}")
_TIMES = re.compile(rb'"(created|created_at)":\d+')


def _parsed(body: bytes, stream: bool) -> Any:
    body = _TIMES.sub(rb'"\1":0', _IDS.sub(rb"\1-ID", body))
    if not stream:
        return json.loads(body)
    payloads: list[Any] = []
    for line in body.split(b"\n"):
        if line.startswith(b"data: "):
            data = line[6:]
            payloads.append(data.decode() if data == b"[DONE]" else json.loads(data))
    return payloads


def compare(baseline_url: str, lgos_url: str) -> list[dict[str, Any]]:
    """One row per case: sizes from both servers and whether they match."""
    rows = []
    headers = {"content-type": "application/json"}
    with httpx.Client(timeout=30.0) as client:
        for model in (PLAIN, *VARIANTS):
            for api in APIS:
                for stream in (True, False):
                    request = target(api, model, stream=stream)
                    bodies = [
                        client.post(
                            url + request.path, content=request.body, headers=headers
                        ).content
                        for url in (baseline_url, lgos_url)
                    ]
                    same = _parsed(bodies[0], stream) == _parsed(bodies[1], stream)
                    rows.append(
                        {
                            "case": f"{api}/{'stream' if stream else 'json'}/{model}",
                            "baseline_bytes": len(bodies[0]),
                            "lgos_bytes": len(bodies[1]),
                            "equivalent": same,
                        }
                    )
    return rows
