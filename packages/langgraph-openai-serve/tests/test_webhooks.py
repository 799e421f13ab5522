"""Signed webhooks to a real local receiver, verified with the official SDK
(``client.webhooks.unwrap``): batch and background Response events, the
Standard Webhooks signature (a tampered body or a stale timestamp fails),
retries with the same ``webhook-id``, tenants' endpoints, and a secret per
receiver (one cannot forge another's events)."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from batch_fixtures import TenantsFactory
from langgraph_openai_serve import GraphFeature, Settings
from langgraph_openai_serve.testing import ScriptedChatModel
from lgos_testkit import Received, WebhookReceiver, await_batch, await_response
from openai import OpenAI
from pydantic import ValidationError
from standardwebhooks.webhooks import Webhook
from support import config, single_model_graph

pytestmark = pytest.mark.anyio

SECRET = "whsec_" + base64.b64encode(b"lgos-webhook-test-secret-32bytes").decode()
VERIFIER = OpenAI(api_key="unused", webhook_secret=SECRET)
ALICES_SECRET = (
    "whsec_" + base64.b64encode(b"alice's receiver signs with this").decode()
)
OPS_SECRET = "whsec_" + base64.b64encode(b"the operations receiver's secret").decode()


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as started:
        yield started


def _graphs() -> dict[str, Any]:
    model = ScriptedChatModel(responder=lambda messages: "ok")
    return {
        "echo": config(single_model_graph(model), features={GraphFeature.BACKGROUND})
    }


def _endpoints(*endpoints: dict[str, Any]) -> dict[str, Any]:
    return {
        "WEBHOOK_ENDPOINTS": list(endpoints),
        "WEBHOOK_SECRET": SECRET,
    }


def _line() -> dict[str, Any]:
    return {
        "custom_id": "a",
        "method": "POST",
        "url": "/v1/responses",
        "body": {"model": "echo", "input": "hi"},
    }


async def _batch(tenant: Any, *, failing: bool = False) -> str:
    """A batch run to its end: ``completed``, or ``failed`` (its only line
    is not JSON)."""
    lines: list[Any] = ["{not json"] if failing else [_line()]
    created = await tenant.lgos.batches.create(
        input_file_id=await tenant.upload(lines),
        endpoint="/v1/responses",
        completion_window="24h",
    )
    await await_batch(tenant.lgos, created.id)
    return created.id


def _unwrap(delivery: Received) -> Any:
    return VERIFIER.webhooks.unwrap(delivery.body, delivery.headers)


async def test_a_finished_batch_sends_a_signed_event_the_sdk_verifies(
    tenants: TenantsFactory, receiver: WebhookReceiver
) -> None:
    alice = tenants(
        _graphs(), **_endpoints({"url": receiver.url, "scopes": ["alice"]})
    )["alice"]
    completed = await _batch(alice)
    failed = await _batch(alice, failing=True)

    first, second = await receiver.arrived(2)
    events = sorted((_unwrap(first), _unwrap(second)), key=lambda e: e.type)
    assert [(e.type, e.data.id) for e in events] == [
        ("batch.completed", completed),
        ("batch.failed", failed),
    ]
    assert all(e.object == "event" and e.id.startswith("evt_") for e in events)
    assert first.headers["webhook-id"] == json.loads(first.body)["id"]


async def test_a_tampered_body_or_a_stale_timestamp_fails_to_verify(
    tenants: TenantsFactory, receiver: WebhookReceiver
) -> None:
    alice = tenants(_graphs(), **_endpoints({"url": receiver.url, "scopes": ["*"]}))[
        "alice"
    ]
    await _batch(alice)
    [delivery] = await receiver.arrived(1)
    tampered = delivery.body.replace(b"batch.completed", b"batch.cancelled")
    stale = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=10)
    resigned = {
        **delivery.headers,
        "webhook-timestamp": str(int(stale.timestamp())),
        "webhook-signature": Webhook(SECRET).sign(
            delivery.headers["webhook-id"], stale, delivery.body.decode()
        ),
    }

    assert _unwrap(delivery).type == "batch.completed"
    with pytest.raises(openai.InvalidWebhookSignatureError):
        VERIFIER.webhooks.unwrap(tampered, delivery.headers)
    with pytest.raises(openai.InvalidWebhookSignatureError, match="too old"):
        VERIFIER.webhooks.unwrap(delivery.body, resigned)
    with pytest.raises(openai.InvalidWebhookSignatureError):
        OpenAI(api_key="x").webhooks.unwrap(
            delivery.body, delivery.headers, secret="whsec_" + "A" * 44
        )


async def test_a_failed_delivery_is_retried_with_the_same_webhook_id(
    tenants: TenantsFactory, receiver: WebhookReceiver
) -> None:
    receiver.fail_next(500, 503)
    alice = tenants(_graphs(), **_endpoints({"url": receiver.url, "scopes": ["*"]}))[
        "alice"
    ]
    batch_id = await _batch(alice)

    [delivered] = await receiver.arrived(1)
    attempts = receiver.received
    assert [a.status for a in attempts] == [500, 503, 200]
    assert {a.headers["webhook-id"] for a in attempts} == {
        delivered.headers["webhook-id"]
    }
    assert {a.body for a in attempts} == {delivered.body}
    assert _unwrap(delivered).data.id == batch_id


async def test_each_endpoint_gets_only_its_tenants_events(
    tenants: TenantsFactory, receiver: WebhookReceiver
) -> None:
    with WebhookReceiver() as bobs:
        both = tenants(
            _graphs(),
            **_endpoints(
                {"url": receiver.url, "scopes": ["alice"]},
                {
                    "url": bobs.url,
                    "scopes": ["bob"],
                    "events": ["batch.failed"],
                    "secret": OPS_SECRET,
                },
            ),
        )
        alices_batch = await _batch(both["alice"])
        await _batch(both["bob"])  # completed: bob's endpoint takes failures only
        bobs_failure = await _batch(both["bob"], failing=True)

        [alices] = await receiver.arrived(1)
        [bobs_event] = await bobs.arrived(1)
        bobs_verifier = OpenAI(api_key="unused", webhook_secret=OPS_SECRET)
        assert _unwrap(alices).data.id == alices_batch
        assert bobs_verifier.webhooks.unwrap(
            bobs_event.body, bobs_event.headers
        ).data.id == (bobs_failure)
        assert len(receiver.received) == 1


async def test_each_receiver_verifies_with_its_own_secret_and_cannot_forge_anothers(
    tenants: TenantsFactory, receiver: WebhookReceiver
) -> None:
    with WebhookReceiver() as ops:
        alice = tenants(
            _graphs(),
            WEBHOOK_ENDPOINTS=[
                {"url": receiver.url, "scopes": ["alice"], "secret": ALICES_SECRET},
                {"url": ops.url, "scopes": ["*"], "secret": OPS_SECRET},
            ],
        )["alice"]
        batch_id = await _batch(alice)
        [alices] = await receiver.arrived(1)
        [ops_copy] = await ops.arrived(1)

    alices_verifier = OpenAI(api_key="unused", webhook_secret=ALICES_SECRET)
    ops_verifier = OpenAI(api_key="unused", webhook_secret=OPS_SECRET)
    assert alices_verifier.webhooks.unwrap(alices.body, alices.headers).data.id == (
        batch_id
    )
    assert ops_verifier.webhooks.unwrap(ops_copy.body, ops_copy.headers).data.id == (
        batch_id
    )
    # What alice's receiver holds signs nothing the operations receiver accepts.
    now = dt.datetime.now(dt.UTC)
    forged_body = alices.body.replace(b"batch.completed", b"batch.failed").decode()
    forged = {
        "webhook-id": "msg_forged",
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(ALICES_SECRET).sign(
            "msg_forged", now, forged_body
        ),
    }
    with pytest.raises(openai.InvalidWebhookSignatureError):
        ops_verifier.webhooks.unwrap(forged_body, forged)
    with pytest.raises(openai.InvalidWebhookSignatureError):
        ops_verifier.webhooks.unwrap(alices.body, alices.headers)


async def test_a_background_response_that_ends_sends_its_event(
    tenants: TenantsFactory, receiver: WebhookReceiver
) -> None:
    alice = tenants(
        _graphs(), **_endpoints({"url": receiver.url, "scopes": ["alice"]})
    )["alice"]
    created = await alice.lgos.responses.create(
        model="echo", input="hi", background=True
    )
    await await_response(alice.lgos, created.id)

    [delivery] = await receiver.arrived(1)
    event = _unwrap(delivery)
    assert (event.type, event.data.id) == ("response.completed", created.id)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"WEBHOOK_ENDPOINTS": [{"url": "http://h/x", "scopes": ["*"]}]},
            "needs a secret",
        ),
        ({"WEBHOOK_SECRET": "not-a-secret"}, "whsec_"),
        (
            {
                "WEBHOOK_SECRET": SECRET,
                "WEBHOOK_ENDPOINTS": [
                    {"url": "http://h", "scopes": ["*"], "events": ["batch.done"]}
                ],
            },
            "batch.done",
        ),
        ({"WEBHOOK_ENDPOINTS": [{"url": "http://h", "scopes": []}]}, "scopes"),
        (
            {
                "WEBHOOK_SECRET": SECRET,
                "WEBHOOK_ENDPOINTS": [
                    {"url": "http://alice/x", "scopes": ["alice"]},
                    {"url": "http://ops/x", "scopes": ["*"]},
                ],
            },
            "may sign one webhook endpoint only",
        ),
        (
            {
                "WEBHOOK_ENDPOINTS": [
                    {"url": "http://alice/x", "scopes": ["alice"], "secret": SECRET},
                    {"url": "http://ops/x", "scopes": ["*"], "secret": SECRET},
                ],
            },
            "share a secret",
        ),
        (
            {
                "WEBHOOK_SECRET": SECRET,
                "WEBHOOK_ENDPOINTS": [
                    {"url": "http://alice/x", "scopes": ["alice"]},
                    {"url": "http://ops/x", "scopes": ["*"], "secret": SECRET},
                ],
            },
            "share a secret",
        ),
        (
            {
                "WEBHOOK_ENDPOINTS": [
                    {"url": "http://h/x", "scopes": ["a"], "secret": SECRET},
                    {"url": "http://h/x", "scopes": ["b"], "secret": OPS_SECRET},
                ],
            },
            "two secrets",
        ),
        (
            {
                "WEBHOOK_ENDPOINTS": [
                    {"url": "http://h", "scopes": ["*"], "secret": "x"}
                ]
            },
            "whsec_",
        ),
    ],
)
def test_webhook_settings_are_checked_at_startup(
    settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message) as refused:
        Settings(**settings)

    assert SECRET not in str(refused.value)  # a refusal never shows a secret


def test_one_endpoint_still_signs_with_the_single_secret() -> None:
    one = Settings(
        WEBHOOK_SECRET=SECRET,
        WEBHOOK_ENDPOINTS=[
            {"url": "http://h/x", "scopes": ["a"]},
            {"url": "http://h/x", "scopes": ["b"], "events": ["batch.failed"]},
            {"url": "http://ops/x", "scopes": ["*"], "secret": OPS_SECRET},
        ],
    )

    assert one.webhook_secrets() == {"http://h/x": SECRET, "http://ops/x": OPS_SECRET}
