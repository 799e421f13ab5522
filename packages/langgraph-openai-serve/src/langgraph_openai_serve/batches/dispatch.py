"""One batch line as an in-process request to the OpenAI app.

The line names its route (``url``), so it goes where a client's request to
that URL would: through the same body parsing, validation, error envelopes,
request id and access log, into the surface's own code. The batch layer
imports no surface, and a surface needs nothing to serve batches. The cost
is an ASGI call and a JSON round of the body, small beside a graph run.

The request runs in the batch's scope (its tenant): the scope travels in the
ASGI scope's state, which only in-process callers can set, and stands in for
the API key a network client would send.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.types import ASGIApp, Message

_API_PREFIX = "/v1"
INTERNAL_SCOPE_KEY = "lgos_internal_scope"
"""Set in the ASGI scope's state by an in-process caller (a batch line) to
the scope the request runs in; no network request can set it, so such a
request needs no API key (``openai/auth.py`` reads it)."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    request_id: str | None
    body: bytes


class LineDispatcher:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def post(self, url: str, body: bytes, scope: str) -> Answer:
        """POST ``body`` to ``url`` (``/v1/...``) as the tenant ``scope``."""
        path = url.removeprefix(_API_PREFIX)
        request = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "root_path": "",
            "query_string": b"",
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
            "client": None,
            "server": None,
            "state": {INTERNAL_SCOPE_KEY: scope},
        }
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        status = 500
        request_id: str | None = None
        chunks: list[bytes] = []

        async def send(message: Message) -> None:
            nonlocal status, request_id
            if message["type"] == "http.response.start":
                status = message["status"]
                for name, value in message.get("headers", ()):
                    if name == b"x-request-id":
                        request_id = value.decode()
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(request, receive, send)
        return Answer(status, request_id, b"".join(chunks))
