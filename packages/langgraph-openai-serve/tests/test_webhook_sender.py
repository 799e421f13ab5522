"""One conformance suite for the webhook sender over every backend's queue
(the ``backend`` fixture of ``backend_fixtures.py``): deliveries are jobs of
the backend's queue, signed the Standard Webhooks way, retried with the
same ``webhook-id`` until the event's deadline."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Iterator

import pytest
from backend_fixtures import jobs_running
from langgraph_openai_serve.webhooks.delivery import Deliverer
from langgraph_openai_serve.webhooks.events import Endpoint
from langgraph_openai_serve.webhooks.sender import QueuedSender, delivery_task
from langgraph_openai_serve.webhooks.service import Webhooks
from lgos_testkit import WebhookReceiver
from standardwebhooks.webhooks import Webhook

pytestmark = pytest.mark.anyio

SECRET = "whsec_" + base64.b64encode(b"lgos-webhook-sender-test-secret!").decode()


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as started:
        yield started


def _webhooks(backend, receiver: WebhookReceiver, retry_for: float) -> Webhooks:
    deliverer = Deliverer({receiver.url: SECRET}, timeout=5.0)
    sender = QueuedSender(backend.jobs, deliverer, retry_for)
    endpoint = Endpoint(receiver.url, frozenset({"alice"}), frozenset({"batch.failed"}))
    return Webhooks([endpoint], sender)


async def test_an_event_reaches_its_endpoint_signed(backend, receiver):
    webhooks = _webhooks(backend, receiver, retry_for=3600)

    async with jobs_running(backend):
        await webhooks.announce(None, "batch.failed", "batch_1", "alice")
        await webhooks.announce(None, "batch.failed", "batch_2", "bob")  # not its
        (delivery,) = await receiver.arrived(1)
    await webhooks.sender.stop()

    event = Webhook(SECRET).verify(delivery.body, delivery.headers)
    assert (event["type"], event["data"]) == ("batch.failed", {"id": "batch_1"})
    assert delivery.headers["webhook-id"] == event["id"]


async def test_a_failed_delivery_is_sent_again_with_the_same_webhook_id(
    backend, receiver
):
    webhooks = _webhooks(backend, receiver, retry_for=3600)
    receiver.fail_next(503)

    async with jobs_running(backend):
        await webhooks.announce(None, "batch.failed", "batch_1", "alice")
        (accepted,) = await receiver.arrived(1)
    await webhooks.sender.stop()

    first, second = receiver.received
    assert (first.status, second.status) == (503, 200)
    assert second is accepted
    assert first.headers["webhook-id"] == second.headers["webhook-id"]


async def test_a_delivery_to_an_endpoint_configured_no_more_is_dropped(
    receiver: WebhookReceiver,
) -> None:
    task = delivery_task(Deliverer({}, timeout=5.0), retry_for=3600)
    job = {
        "url": receiver.url,
        "webhook_id": "evt_1",
        "type": "batch.failed",
        "body": "{}",
        "created_at": time.time(),
    }

    await task.run(job, 0)  # done, not raised (which would retry it)

    assert receiver.received == []


def test_a_delivery_is_retried_until_its_event_is_retry_for_old() -> None:
    task = delivery_task(Deliverer({}, timeout=5.0), retry_for=60)
    fresh = {"created_at": time.time()}
    old = {"created_at": time.time() - 61}

    assert task.retry(RuntimeError("503"), 0, fresh) == 1.0
    assert task.retry(RuntimeError("503"), 3, fresh) == 8.0
    assert task.retry(RuntimeError("503"), 0, old) is None
    assert task.retry(asyncio.CancelledError(), 3, fresh) == 0.0  # a stop
