"""What the tenants of ``lgos-bench fairshare`` send, and what they see.

Three tenants share one fleet, each an API key of its own (``LGOS_API_KEYS``
maps it to the tenant's scope) that is also its owner key at the Files API:

- **A**, bulk: large batches of the wait graph (each line a model call);
- **B**, interactive: background Responses of the wait graph, one every
  ``every`` seconds, each read back once it ended; its answer says when its
  node started, so the wait for a slot is the submission's send to that
  start (one machine, one clock);
- **C**, a small batch of the wait graph.

The admission burst (``burst``) sends streamed Responses of the plain
graph, many at once, and keeps each answer's status, time to its last byte,
error code and ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
from lgos_stack.processes import RunningProcess
from prometheus_client.parser import text_string_to_metric_families

from lgos_bench.batches import BatchEnd, Stack, create_batch, follow_batch, input_file
from lgos_bench.workload import PLAIN, WAIT, responses_body

Log = Callable[[str], None]

SUBMIT_ATTEMPTS = 3
READ_EVERY = 0.5
"""How often a background Response is read until it ended (its wait is
read from its answer, so this bounds nothing measured)."""
ENDED_WITHIN = 900.0
"""The longest a run or a batch may take before the bench gives up."""
TERMINAL = frozenset({"completed", "failed", "cancelled", "incomplete"})
QUEUE_WAIT = "lgos_background_queue_wait_seconds"


@dataclass(frozen=True, slots=True)
class Tenant:
    name: str
    """``A``, ``B``, ``C`` in the report."""
    scope: str
    key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.key}"}


BULK = Tenant("A", "tenant-a", "sk-lgos-bench-tenant-a")
INTERACTIVE = Tenant("B", "tenant-b", "sk-lgos-bench-tenant-b")
SMALL = Tenant("C", "tenant-c", "sk-lgos-bench-tenant-c")
TENANTS = (BULK, INTERACTIVE, SMALL)


def api_keys() -> dict[str, str]:
    """Each tenant's key and scope: ``LGOS_API_KEYS`` and the Files API's
    owner keys alike, so a batch's files belong to its tenant."""
    return {tenant.key: tenant.scope for tenant in TENANTS}


@dataclass(frozen=True, slots=True)
class Sample:
    """One background Response of the interactive tenant (Unix seconds)."""

    response_id: str | None
    sent: float
    status: str
    """How it ended, or ``refused <HTTP status>`` when not accepted."""
    started: float | None = None
    """When its node started (from its answer)."""

    @property
    def wait(self) -> float | None:
        return None if self.started is None else self.started - self.sent


@dataclass(frozen=True, slots=True)
class Answer:
    """One request of an admission burst."""

    status: int
    seconds: float
    """Send to the answer's last byte."""
    code: str | None
    """The error envelope's ``code`` of a refused request."""
    retry_after: str | None


class Following:
    """A batch being followed to its end; ``running`` is set once it left
    ``validating``."""

    def __init__(self, clients: Clients, tenant: Tenant, lines: int) -> None:
        self.tenant = tenant
        self.lines = lines
        self.running = asyncio.Event()
        self.task = asyncio.create_task(clients.batch(tenant, lines, self._status))

    def _status(self, status: str) -> None:
        if status != "validating":
            self.running.set()

    async def started(self) -> None:
        """Until it left ``validating`` (or failed to create)."""
        waiting = asyncio.create_task(self.running.wait())
        await asyncio.wait({waiting, self.task}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if self.task.done():
            self.task.result()  # a failed create raises here


class Clients:
    """The tenants' requests to one fleet, over one HTTP client."""

    def __init__(
        self,
        stack: Stack,
        http: httpx.AsyncClient,
        processes: dict[str, RunningProcess],
        worker_metrics: str,
    ) -> None:
        self.stack = stack
        self.http = http
        self.processes = processes
        self.worker_metrics = worker_metrics

    @property
    def base(self) -> str:
        return self.stack.base

    def start_batch(self, tenant: Tenant, lines: int) -> Following:
        return Following(self, tenant, lines)

    async def batch(
        self, tenant: Tenant, lines: int, on_status: Callable[[str], None]
    ) -> BatchEnd:
        content = input_file(lines, WAIT)
        batch_id, created = await create_batch(
            self.http, self.stack, content, tenant.key
        )
        return await asyncio.wait_for(
            follow_batch(
                self.http,
                self.stack,
                batch_id,
                created,
                tenant.key,
                on_status=on_status,
            ),
            ENDED_WITHIN,
        )

    async def background(self, tenant: Tenant) -> Sample:
        """Submit one background run of the wait graph and read it until it
        ended. A connection the API closed as it was reused is sent again
        under the same ``Idempotency-Key``: it stays one run."""
        headers = {**tenant.headers, "idempotency-key": uuid.uuid4().hex}
        body = {"model": WAIT, "input": "wait", "background": True}
        sent = time.time()
        for attempt in range(SUBMIT_ATTEMPTS):
            try:
                answer = await self.http.post(
                    f"{self.base}/responses", json=body, headers=headers
                )
                break
            except httpx.TransportError:
                if attempt == SUBMIT_ATTEMPTS - 1:
                    raise
        if answer.status_code != 200:
            return Sample(None, sent, f"refused {answer.status_code}")
        response_id = str(answer.json()["id"])
        ended = await asyncio.wait_for(self._ended(tenant, response_id), ENDED_WITHIN)
        if ended["status"] != "completed":
            return Sample(response_id, sent, str(ended["status"]))
        _worker, started, _end = ended["output"][-1]["content"][0]["text"].split()
        return Sample(response_id, sent, "completed", float(started))

    async def _ended(self, tenant: Tenant, response_id: str) -> dict[str, Any]:
        url = f"{self.base}/responses/{response_id}"
        while True:
            await asyncio.sleep(READ_EVERY)
            answer = await self.http.get(url, headers=tenant.headers)
            answer.raise_for_status()
            response = answer.json()
            if response["status"] in TERMINAL:
                return dict(response)

    async def interactive(
        self,
        tenant: Tenant,
        every: float,
        *,
        count: int | None = None,
        until: asyncio.Event | None = None,
    ) -> list[Sample]:
        """One background run every ``every`` seconds, ``count`` of them or
        until ``until`` is set; each as it ended."""
        pending: list[asyncio.Task[Sample]] = []
        began = time.monotonic()
        while count is None or len(pending) < count:
            if until is not None and until.is_set():
                break
            due = began + len(pending) * every
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            if until is not None and until.is_set():
                break
            pending.append(asyncio.create_task(self.background(tenant)))
        return list(await asyncio.gather(*pending))

    async def queue_waits(self) -> dict[float, float]:
        """The worker's ``lgos_background_queue_wait_seconds`` buckets
        (upper bound -> cumulative count, every model added up)."""
        answer = await self.http.get(self.worker_metrics)
        answer.raise_for_status()
        buckets: dict[float, float] = {}
        for family in text_string_to_metric_families(answer.text):
            if family.name != QUEUE_WAIT:
                continue
            for sample in family.samples:
                if sample.name == f"{QUEUE_WAIT}_bucket":
                    bound = float(sample.labels["le"])
                    buckets[bound] = buckets.get(bound, 0.0) + sample.value
        return buckets

    def exited(self) -> list[dict[str, object]]:
        """The fleet's ``lgos`` processes that are gone, with their codes."""
        return [
            {"process": name, "code": process.process.returncode}
            for name, process in self.processes.items()
            if process.exited()
        ]


def burst(base: str, tenant: Tenant, count: int) -> list[Answer]:
    """``count`` streamed Responses of the plain graph sent at once, each by
    a thread of its own on a connection it opened beforehand. The stdlib's
    blocking ``http.client``: a thread waiting for its answer holds nothing,
    so a refused request's answer is read when it comes, not after the
    accepted streams' reading as in one busy event loop (which added
    hundreds of ms to every refusal here)."""
    url = urlsplit(base)
    body = responses_body(PLAIN, stream=True)
    headers = {**tenant.headers, "content-type": "application/json"}
    together = threading.Barrier(count, timeout=60)
    answers: list[Answer | None] = [None] * count

    def one(index: int) -> None:
        connection = http.client.HTTPConnection(url.netloc, timeout=60)
        try:
            connection.connect()
            together.wait()
            began = time.perf_counter()
            connection.request("POST", f"{url.path}/responses", body, headers)
            answer = connection.getresponse()
            text = answer.read()  # a stream to its end, or an error's body
            seconds = time.perf_counter() - began
        finally:
            connection.close()
        code = None
        if answer.status != 200:
            code = str(json.loads(text).get("error", {}).get("code"))
        retry_after = answer.getheader("retry-after")
        answers[index] = Answer(answer.status, seconds, code, retry_after)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if None in answers:
        raise RuntimeError("a burst request got no answer (its thread failed)")
    return [answer for answer in answers if answer is not None]
