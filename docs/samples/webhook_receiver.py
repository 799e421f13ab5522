import os
from typing import Any

from fastapi import FastAPI, Request, Response
from openai import InvalidWebhookSignatureError, OpenAI

# This receiver's own whsec_ secret: the "secret" of its entry in
# LGOS_WEBHOOK_ENDPOINTS (no other receiver has it).
verifier = OpenAI(api_key="unused", webhook_secret=os.environ["WEBHOOK_SECRET"])
seen: set[str] = set()
events: list[Any] = []

app = FastAPI()


@app.post("/webhooks")
async def receive(request: Request) -> Response:
    body = await request.body()
    try:
        event = verifier.webhooks.unwrap(body, request.headers)
    except InvalidWebhookSignatureError:
        return Response(status_code=400)  # not from LGOS, or replayed late
    # A retry carries the same webhook-id: do the work once.
    if request.headers["webhook-id"] not in seen:
        seen.add(request.headers["webhook-id"])
        events.append(event)  # e.g. fetch the batch's output file now
    return Response(status_code=204)  # any 2xx; anything else is retried
