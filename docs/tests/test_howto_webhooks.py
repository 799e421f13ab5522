"""The webhooks how-to: a background Response's end reaches the sample
receiver, which verifies it with the SDK and refuses a forged delivery,
even one signed with another receiver's secret."""

from __future__ import annotations

import base64
import datetime as dt
import importlib
import json
import sys

import httpx
import pytest
from lgos_testkit import STARTUP_SECONDS, ThreadServer, wait_until
from standardwebhooks.webhooks import Webhook

SECRET = "whsec_" + base64.b64encode(b"docs-webhook-secret-of-32-bytes!").decode()
OTHER = "whsec_" + base64.b64encode(b"another receiver's own secret!!!").decode()


def test_the_receiver_verifies_lgos_events_and_refuses_forgeries(
    serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEBHOOK_SECRET", SECRET)
    sys.modules.pop("webhook_receiver", None)
    receiver = importlib.import_module("webhook_receiver")
    with ThreadServer(receiver.app) as hook:
        endpoint = {"url": f"{hook.url}/webhooks", "scopes": ["*"], "secret": SECRET}
        # Another receiver, with its own secret, gets the same events: what
        # it holds signs nothing this receiver accepts.
        other = {"url": f"{hook.url}/elsewhere", "scopes": ["*"], "secret": OTHER}
        monkeypatch.setenv("LGOS_WEBHOOK_ENDPOINTS", json.dumps([endpoint, other]))
        client = serve("report_app").client()
        job = client.responses.create(model="report", input="Go", background=True)

        wait_until(lambda: bool(receiver.events), STARTUP_SECONDS, "the event")
        [event] = receiver.events
        forged = httpx.post(
            endpoint["url"],
            content=json.dumps({**event.to_dict(), "type": "response.failed"}),
            headers={
                "webhook-id": "msg_x",
                "webhook-timestamp": "0",
                "webhook-signature": "v1,AAAA",
            },
        )
        now = dt.datetime.now(dt.UTC)
        body = json.dumps({**event.to_dict(), "type": "response.failed"})
        signed_elsewhere = httpx.post(
            endpoint["url"],
            content=body,
            headers={
                "webhook-id": "msg_y",
                "webhook-timestamp": str(int(now.timestamp())),
                "webhook-signature": Webhook(OTHER).sign("msg_y", now, body),
            },
        )

    assert (event.type, event.data.id) == ("response.completed", job.id)
    assert forged.status_code == 400
    assert signed_elsewhere.status_code == 400
    assert len(receiver.events) == 1
