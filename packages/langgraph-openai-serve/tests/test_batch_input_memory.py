"""What a hostile batch input costs a real ``lgos worker``: its peak memory
(``VmHWM``) read before and after the worker validates the input.

A line is held to ``LGOS_BATCH_MAX_LINE_BYTES`` (1 MiB) while it is read,
so a 10 MiB line of ``[{},{},...]`` costs the worker about the cap, not the
224 MiB parsing it took; a line at the cap costs at most about 27 times it,
the figure the security page states; and valid lines near the cap go to the
store a group of 4 MiB at a time, never all together.
"""

from __future__ import annotations

import json
import sys

import pytest
from batch_stack import StackFactory, create_batch, upload_lines
from lgos_testkit import (
    memory_bytes,
    peak_rss_bytes,
    reset_peak_rss,
    wait_for_batch,
)
from openai import OpenAI

MIB = 1024 * 1024
LINE_CAP = MIB  # LGOS_BATCH_MAX_LINE_BYTES's default
OVER_CAP_GROWTH = 8 * MIB
"""What reading a line past the cap may add: the cap itself and transport
buffers; parsing the 10 MiB line took about 224 MiB."""
AT_CAP_GROWTH = 27 * LINE_CAP + 8 * MIB
"""A line at the cap parsed (about 25 times its size) plus the same room."""
MANY_GROWTH = 3 * 4 * MIB + 2 * LINE_CAP + 12 * MIB
"""Valid lines near the cap: one group of lines on its way to the store (4
MiB, about three times over while the driver encodes it) and a line or two
being read and parsed, plus room for the allocator (14.6-17.5 MiB measured;
40.2 MiB when every line was held); the 48 lines and their 12 MiB of
custom_id values are never held at once."""


def _empty_objects(size: int) -> bytes:
    """``[{},{},...]`` of about ``size`` bytes: a dict per three bytes, the
    costliest JSON to parse per byte."""
    return b"[" + b",".join([b"{}"] * (size // 3)) + b"]"


def _long_valid_lines(count: int) -> bytes:
    """``count`` valid lines just under the cap, each with a 256 KiB
    ``custom_id``, then one naming an unknown model (so nothing runs)."""
    lines = [
        json.dumps(
            {
                "custom_id": f"{i:08d}" + "c" * (256 * 1024),
                "method": "POST",
                "url": "/v1/responses",
                "body": {"model": "work", "input": "x" * (700 * 1024)},
            }
        )
        for i in range(count)
    ]
    last = {"custom_id": "last", "method": "POST", "url": "/v1/responses"}
    lines.append(json.dumps({**last, "body": {"model": "nobody", "input": "x"}}))
    return "".join(line + "\n" for line in lines).encode()


def _peak_growth(worker_pid: int, client: OpenAI, files: OpenAI, content: bytes):
    """The batch of ``content`` once it ended, and how far the worker's peak
    memory rose above its resident size before it."""
    input_file = files.files.create(file=("in.jsonl", content), purpose="batch")
    reset_peak_rss(worker_pid)
    baseline = memory_bytes(worker_pid)
    done = wait_for_batch(client, create_batch(client, input_file.id).id)
    return done, peak_rss_bytes(worker_pid) - baseline


def test_a_hostile_line_costs_a_worker_the_line_cap_not_its_size(
    batch_stack: StackFactory, files: OpenAI, request: pytest.FixtureRequest
) -> None:
    stack = batch_stack()
    stack.start_api()
    worker = stack.start_worker()
    client = stack.client()
    # Warm up: the worker has imported, connected and run a batch once.
    warm = create_batch(client, upload_lines(files, ["warm"]))
    assert wait_for_batch(client, warm.id).status == "completed"

    over, over_growth = _peak_growth(
        worker.pid, client, files, _empty_objects(10 * MIB) + b"\n"
    )
    at, at_growth = _peak_growth(
        worker.pid, client, files, _empty_objects(LINE_CAP - 1) + b"\n"
    )

    many, many_growth = _peak_growth(worker.pid, client, files, _long_valid_lines(48))

    report = (
        f"\nlgos worker peak RSS growth: a 10 MiB line {over_growth / MIB:.1f} "
        f"MiB, a line at the 1 MiB cap {at_growth / MIB:.1f} MiB, 48 valid "
        f"lines near the cap {many_growth / MIB:.1f} MiB\n"
    )
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        sys.stdout.write(report)
    assert over.status == "failed"
    assert over.errors is not None
    assert over.errors.data is not None
    assert [(e.code, e.line) for e in over.errors.data] == [("line_too_large", 1)]
    assert at.status == "failed"
    assert at.errors is not None
    assert at.errors.data is not None
    assert [(e.code, e.line) for e in at.errors.data] == [("invalid_json_line", 1)]
    assert many.status == "failed"
    assert many.errors is not None
    assert many.errors.data is not None
    assert [(e.code, e.line) for e in many.errors.data] == [("model_not_found", 49)]
    assert over_growth < OVER_CAP_GROWTH, report
    assert at_growth < AT_CAP_GROWTH, report
    assert many_growth < MANY_GROWTH, report
