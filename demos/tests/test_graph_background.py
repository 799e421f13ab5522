"""``background``: a long multi-step run submitted with ``background=true``,
executed by the ``lgos worker`` on the PostgreSQL queue."""

from __future__ import annotations

import json
import time

from openai import OpenAI
from openai.types.responses import Response


def _pace(steps: int, step_seconds: float) -> dict[str, str]:
    settings = {"steps": steps, "step_seconds": step_seconds}
    return {"lgos_settings": json.dumps(settings)}


def _wait(api: OpenAI, response_id: str, statuses: set[str], seconds: float = 30):
    deadline = time.monotonic() + seconds
    while True:
        response = api.responses.retrieve(response_id)
        if response.status in statuses or time.monotonic() > deadline:
            return response
        time.sleep(0.1)


def _commentary(response: Response) -> list[str]:
    return [
        item.content[0].text
        for item in response.output
        if item.type == "message" and item.phase == "commentary"
    ]


STEPS = [
    "Step 1/3: Collecting the records",
    "Step 2/3: Checking the totals",
    "Step 3/3: Comparing with last month",
    "All 3 steps done",
]


def test_submit_follow_the_stream_and_poll_until_completed(api):
    submitted = api.responses.create(
        model="background",
        input="Monthly report",
        background=True,
        metadata=_pace(3, 0.3),
    )
    # Following the run's stream while it runs, then replaying it from a point.
    events = list(api.responses.retrieve(submitted.id, stream=True))
    done = _wait(api, submitted.id, {"completed", "failed", "cancelled"})
    replay = list(
        api.responses.retrieve(
            submitted.id, stream=True, starting_after=events[1].sequence_number
        )
    )

    assert submitted.status in {"queued", "in_progress"}
    assert done.status == "completed"
    assert _commentary(done) == STEPS
    assert "finished after 3 steps" in done.output_text
    statuses = [
        e.text
        for e in events
        if e.type == "response.output_text.done" and e.text in STEPS
    ]
    assert statuses == STEPS
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == done.output_text
    assert [e.sequence_number for e in replay] == [
        e.sequence_number for e in events[2:]
    ]


def test_cancel_a_running_job(api):
    submitted = api.responses.create(
        model="background", input="Slow report", background=True, metadata=_pace(5, 5)
    )
    running = _wait(api, submitted.id, {"in_progress"})

    cancelled = api.responses.cancel(submitted.id)
    final = _wait(api, submitted.id, {"cancelled", "completed", "failed"})

    assert running.status == "in_progress"
    assert cancelled.status in {"cancelled", "in_progress"}
    assert final.status == "cancelled"
    assert api.responses.cancel(submitted.id).status == "cancelled"  # idempotent
