"""One delivery attempt: the payload signed the Standard Webhooks way.

Headers ``webhook-id`` (the event's id, the same on every attempt),
``webhook-timestamp`` (this attempt's time) and ``webhook-signature``
(``v1,`` + base64 HMAC-SHA256 of ``id.timestamp.body`` with the ``whsec_``
secret), signed by the ``standardwebhooks`` library, as OpenAI signs. Each
receiver (url) has a secret of its own, so a receiver can verify its own
events and forge no other's. The secrets stay in the process: a queued
delivery names its url, and is signed with that url's secret when it is
sent.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping
from typing import Any

import httpx
from standardwebhooks.webhooks import Webhook

logger = logging.getLogger("langgraph_openai_serve")

BACKOFF_CAP_SECONDS = 3600.0


class DeliveryFailed(Exception):
    """The endpoint answered other than 2xx, or not in time."""


class Deliverer:
    """Signs and sends; one HTTP client for every delivery of the process.

    ``secrets``: each receiver's url and its ``whsec_`` secret.
    """

    def __init__(self, secrets: Mapping[str, str], timeout: float) -> None:
        self._signers = {url: Webhook(secret) for url, secret in secrets.items()}
        self._timeout = timeout
        self._client: httpx.AsyncClient | None = None

    def knows(self, url: str) -> bool:
        """Whether ``url`` is a configured receiver (one queued before a
        configuration change may no longer be)."""
        return url in self._signers

    async def send(self, url: str, webhook_id: str, body: str) -> None:
        """POST ``body`` to ``url`` once, signed with its receiver's secret.

        Raises:
            KeyError: ``url`` is no configured receiver (see ``knows``).
            DeliveryFailed: a non-2xx answer, a timeout or a connection error.
        """
        signer = self._signers[url]
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self._timeout)
        now = dt.datetime.now(dt.UTC)
        headers = {
            "content-type": "application/json",
            "webhook-id": webhook_id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": signer.sign(webhook_id, now, body),
        }
        try:
            answer = await self._client.post(url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            raise DeliveryFailed(f"{url}: {type(exc).__name__}: {exc}") from exc
        if not answer.is_success:
            raise DeliveryFailed(f"{url} answered {answer.status_code}")

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def backoff(attempt: int) -> float:
    """Seconds before retry ``attempt`` (1, 2, 4, ... up to an hour)."""
    return min(float(2 ** max(attempt - 1, 0)), BACKOFF_CAP_SECONDS)


def describe(job: dict[str, Any]) -> str:
    return f"{job['type']} {job['webhook_id']} -> {job['url']}"
