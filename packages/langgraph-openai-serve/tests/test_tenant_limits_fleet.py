"""A tenant's limits on real processes: ``lgos serve`` (two of them) and
``lgos worker`` on PostgreSQL, with the session's Files API. The fleet-wide
limits hold whichever API process a request reaches, a burst past a
process's foreground limit is refused with OpenAI's rate-limit headers, and
the official SDK's own retries get through once room is made.

Runs whose input starts with ``hold`` wait for the test (``batch_app``), so
what is queued or running is fixed by the test, never by timing.
"""

from __future__ import annotations

import concurrent.futures

import httpx
import openai
import pytest
from background_stack import TERMINAL
from batch_stack import StackFactory, create_batch, upload_lines
from lgos_testkit import wait_for_batch, wait_until
from metrics_support import scrape
from openai import OpenAI

pytestmark = pytest.mark.timeout(600)


def _refusals(base_url: str, reason: str) -> float:
    metrics = base_url.removesuffix("/v1") + "/metrics"
    return scrape(metrics).value("lgos_requests_refused_total", reason=reason)


def test_background_limit_holds_over_two_api_processes_and_the_sdk_retry_gets_through(
    batch_stack: StackFactory,
) -> None:
    stack = batch_stack(LGOS_TENANT_MAX_BACKGROUND="2", LGOS_TENANT_MAX_RUNS="1")
    stack.start_api()
    stack.start_worker()
    first = stack.client()
    held = [
        first.responses.create(model="work", input=f"hold-{n}", background=True)
        for n in range(2)
    ]
    stack.wait_marker("start", "hold-0")
    stack.wait_marker("start", "hold-1")
    _, other_url = stack.another_api()

    # The other process counts the tenant's Responses in PostgreSQL too.
    refused = httpx.post(
        f"{other_url}/responses",
        json={"model": "work", "input": "refused", "background": True},
        timeout=30,
    )
    # A burst past the tenant's foreground runs on this process (1): the
    # second of two held foreground runs is refused at once.
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        running = pool.submit(
            httpx.post,
            f"{other_url}/responses",
            json={"model": "work", "input": "hold-foreground"},
            timeout=60,
        )
        stack.wait_marker("start", "hold-foreground")
        burst = httpx.post(
            f"{other_url}/responses",
            json={"model": "work", "input": "burst"},
            timeout=30,
        )
        # The SDK's own retries (Retry-After: 1) get through once a run ends.
        with OpenAI(base_url=other_url, api_key="x", max_retries=5) as sdk:
            before = _refusals(other_url, "tenant_background")
            retried = pool.submit(
                sdk.responses.create, model="work", input="retried", background=True
            )
            wait_until(
                lambda: _refusals(other_url, "tenant_background") > before,
                60,
                "the SDK's first try to be refused",
            )
            stack.release("hold")
            submitted = retried.result(timeout=120)
        foreground = running.result(timeout=120)

    assert refused.status_code == 429, refused.text
    error = refused.json()["error"]
    assert error["code"] == "rate_limit_exceeded"
    assert "2 background responses" in error["message"]
    assert refused.headers["retry-after"] == "1"
    assert burst.status_code == 429, burst.text
    assert burst.headers["x-ratelimit-limit-requests"] == "1"
    assert burst.headers["x-ratelimit-remaining-requests"] == "0"
    assert burst.headers["retry-after"] == "1"
    assert foreground.status_code == 200
    for response in [*held, submitted]:
        stack.wait_status(response.id, TERMINAL)
        assert stack.status(response.id) == "completed"
    # Nothing was kept of the refused submissions: the tenant's Responses
    # are the two held ones and the retried one.
    kept = stack.sql(
        "SELECT count(*) FROM lgos_background_responses WHERE job IS NOT NULL"
    )
    assert kept == [(3,)]


def test_batch_limit_refuses_a_batch_past_it_until_one_ends(
    batch_stack: StackFactory, files: OpenAI
) -> None:
    stack = batch_stack(LGOS_TENANT_MAX_BATCHES="1")
    stack.start_api()
    stack.start_worker()
    client = stack.client()
    held_input = upload_lines(files, ["hold-batch"])
    quick_input = upload_lines(files, ["quick"])
    open_batch = create_batch(client, held_input)
    stack.wait_marker("start", "hold-batch")

    with pytest.raises(openai.RateLimitError) as refused:
        create_batch(client, quick_input)
    stack.release("hold")
    ended = wait_for_batch(client, open_batch.id)
    after = create_batch(client, quick_input)
    done = wait_for_batch(client, after.id)

    assert refused.value.status_code == 429
    assert refused.value.code == "rate_limit_exceeded"
    assert refused.value.response.headers["retry-after"] == "1"
    assert ended.status == "completed"
    assert done.status == "completed", done.errors
    assert stack.sql("SELECT count(*) FROM lgos_batches") == [(2,)]
