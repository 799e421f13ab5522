"""The clients of ``lgos-bench outage``: what they send, and every answer
they get, stamped.

Three kinds of client run side by side on one event loop, from ``start``
to ``stop``, whatever the database does meanwhile:

- **submitter**: a background run (``POST /v1/responses``,
  ``background: true``) every ``SUBMIT_EVERY`` seconds, each with an
  ``Idempotency-Key`` of its own. A 408, 409, 429, 5xx or a transport error
  is retried with the same key, after ``Retry-After`` when the answer has
  one, else the official SDK's back-off; as the SDK does, but given up only
  once ``GIVE_UP_SECONDS`` have passed since the first try (the SDK gives up
  after 2 retries), so an outage of 15 s is waited out by a patient client.
- **foreground**: ``FOREGROUND_CLIENTS`` loops of non-streamed Responses
  (``store: true``: the response store is written), back to back; an answer
  that says ``Retry-After`` is honoured before the next request, as a
  client told to come back would.
- **probes**: ``/health/ready`` of the API and of every worker, each on its
  own schedule every ``PROBE_EVERY`` seconds, one at a time per target and
  each with a fresh connection and a ``PROBE_TIMEOUT`` (as a kubelet does).

Every HTTP answer (retries included) is an ``Answer``, every probe a
``Probe``, every submission a ``Submission``; all stamped with
``time.monotonic()``, the clock the faults are stamped with too, so the
report cuts them into phases by events, not guesses.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import httpx

from lgos_bench.workload import PLAIN

SUBMIT_EVERY = 0.3
FOREGROUND_CLIENTS = 2
PROBE_EVERY = 0.25
PROBE_TIMEOUT = 5.0
REQUEST_TIMEOUT = httpx.Timeout(30.0, connect=5.0)
"""A request's client timeout: long enough to see how long LGOS holds one."""
GIVE_UP_SECONDS = 20.0
RETRIED = frozenset({408, 409, 429})
"""Statuses the official SDK retries, besides every 5xx."""
ENDED = frozenset({"completed", "failed", "cancelled", "incomplete"})
POLL_EVERY = 0.1
"""How often the first run submitted after a fault is looked at."""
_HEADERS = {"content-type": "application/json", "authorization": "Bearer bench"}
_SUBMIT = json.dumps({"model": PLAIN, "input": "Say something.", "background": True})
_FOREGROUND = json.dumps({"model": PLAIN, "input": "Say something.", "store": True})

Kind = Literal["submit", "foreground"]


@dataclass(frozen=True, slots=True)
class Answer:
    """One HTTP exchange of the load: a submission's try or a foreground
    request."""

    kind: Kind
    sent: float
    took: float
    status: int | None
    """``None``: no HTTP answer (``error`` says what happened instead)."""
    error: str | None = None
    """The transport error's class (``ReadTimeout``, ``RemoteProtocolError``
    ...) or, for an HTTP error, the OpenAI envelope's ``code``."""


@dataclass(frozen=True, slots=True)
class Submission:
    """One background run as its client saw it, all its tries together."""

    key: str
    sent: float
    """The first try."""
    tries: int
    accepted: float | None
    """When a try answered 200; ``None``: never accepted."""
    response_id: str | None


@dataclass(frozen=True, slots=True)
class Probe:
    target: str
    """``api``, ``worker 0``, ``worker 1`` ..."""
    sent: float
    took: float
    status: int | None
    error: str | None = None
    """The transport error's class, or the ``reason`` a 503 gave."""


@dataclass(frozen=True, slots=True)
class Ending:
    """How an accepted run ended, as ``GET /v1/responses/{id}`` said."""

    response_id: str
    status: str
    """``completed``, ``failed``, ``cancelled``, ``incomplete``, or
    ``not ended`` / ``missing`` (404) when the wait for it ran out."""
    error: str | None = None
    """A failed run's ``error.code``: ``error.message``."""


@dataclass
class Records:
    """Everything the clients saw, in the order it happened."""

    answers: list[Answer] = field(default_factory=list)
    submissions: list[Submission] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)


def _code(response: httpx.Response) -> str | None:
    """The OpenAI envelope's ``error.code`` of an error answer, if any."""
    try:
        body = response.json()
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return str(code) if code is not None else None


def _reason(response: httpx.Response) -> str | None:
    """Why ``/health/ready`` says not ready (its ``reason``), if it says."""
    try:
        body = response.json()
    except ValueError:
        return None
    reason = body.get("reason") if isinstance(body, dict) else None
    return str(reason)[:120] if reason is not None else None


def retry_delay(response: httpx.Response | None, retries: int) -> float:
    """What the official SDK waits before a retry: ``Retry-After`` (seconds,
    up to 60) when the answer has it, else 0.5 s doubled per retry up to
    8 s, less up to a quarter of jitter."""
    if response is not None:
        try:
            told = float(response.headers.get("retry-after", ""))
        except ValueError:
            told = -1.0
        if 0 <= told <= 60:
            return told
    return min(0.5 * 2.0**retries, 8.0) * (1 - 0.25 * random.random())


class Load:
    """The three kinds of client against one API and its workers."""

    def __init__(self, api: str, health: Sequence[tuple[str, str]]) -> None:
        self.api = api
        """``http://127.0.0.1:PORT/v1``."""
        self.health = tuple(health)
        """``(target, /health/ready URL)`` to probe."""
        self.records = Records()
        self.last_probe: dict[str, Probe] = {}
        self._accepted = asyncio.Condition()
        self._stopping = asyncio.Event()
        self._submitting: set[asyncio.Task[None]] = set()
        self._loops: list[asyncio.Task[None]] = []
        self._client = httpx.AsyncClient(
            timeout=REQUEST_TIMEOUT,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=32),
        )
        self._prober = httpx.AsyncClient(
            timeout=PROBE_TIMEOUT, limits=httpx.Limits(max_keepalive_connections=0)
        )

    async def _exchange(
        self, kind: Kind, content: str, headers: dict[str, str]
    ) -> httpx.Response | None:
        """One POST of the load, recorded; the answer, or ``None`` when none
        came (a timeout, a reset)."""
        sent = time.monotonic()
        try:
            response = await self._client.post(
                f"{self.api}/responses", content=content, headers=headers
            )
        except httpx.TransportError as exc:
            took = time.monotonic() - sent
            self.records.answers.append(
                Answer(kind, sent, took, None, type(exc).__name__)
            )
            return None
        took = time.monotonic() - sent
        code = None if response.status_code == 200 else _code(response)
        self.records.answers.append(
            Answer(kind, sent, took, response.status_code, code)
        )
        return response

    async def submit_one(self) -> None:
        """One background run, retried as the SDK would until accepted or
        ``GIVE_UP_SECONDS`` have passed."""
        key = uuid.uuid4().hex
        headers = {**_HEADERS, "idempotency-key": key}
        first = time.monotonic()
        tries = 0
        while True:
            tries += 1
            response = await self._exchange("submit", _SUBMIT, headers)
            if response is not None and response.status_code == 200:
                accepted = time.monotonic()
                response_id = str(response.json()["id"])
                self.records.submissions.append(
                    Submission(key, first, tries, accepted, response_id)
                )
                async with self._accepted:
                    self._accepted.notify_all()
                return
            retried = response is None or (
                response.status_code >= 500 or response.status_code in RETRIED
            )
            delay = retry_delay(response, tries - 1)
            if not retried or time.monotonic() + delay - first > GIVE_UP_SECONDS:
                self.records.submissions.append(
                    Submission(key, first, tries, None, None)
                )
                return
            await asyncio.sleep(delay)

    async def _submitter(self) -> None:
        began = time.monotonic()
        index = 0
        while not self._stopping.is_set():
            task = asyncio.create_task(self.submit_one())
            self._submitting.add(task)
            task.add_done_callback(self._submitting.discard)
            index += 1
            due = began + index * SUBMIT_EVERY
            await asyncio.sleep(max(0.0, due - time.monotonic()))

    async def foreground_one(self) -> httpx.Response | None:
        """One stored non-streamed Response, recorded."""
        return await self._exchange("foreground", _FOREGROUND, _HEADERS)

    async def _foreground(self) -> None:
        while not self._stopping.is_set():
            response = await self.foreground_one()
            if response is None:
                await asyncio.sleep(0.5)  # no answer to say when: do not spin
            elif "retry-after" in response.headers:
                await asyncio.sleep(retry_delay(response, 0))

    async def probe(self, target: str, url: str) -> Probe:
        sent = time.monotonic()
        try:
            response = await self._prober.get(url)
        except httpx.TransportError as exc:
            found = Probe(
                target, sent, time.monotonic() - sent, None, type(exc).__name__
            )
        else:
            took = time.monotonic() - sent
            said = None if response.status_code == 200 else _reason(response)
            found = Probe(target, sent, took, response.status_code, said)
        self.records.probes.append(found)
        self.last_probe[target] = found
        return found

    async def _prober_loop(self, target: str, url: str) -> None:
        due = time.monotonic()
        while not self._stopping.is_set():
            await self.probe(target, url)
            due += PROBE_EVERY
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            due = max(due, time.monotonic())  # one at a time, as a kubelet

    def start(self) -> None:
        """Every client, until ``stop``."""
        self._loops = [asyncio.create_task(self._submitter())]
        self._loops += [
            asyncio.create_task(self._foreground()) for _ in range(FOREGROUND_CLIENTS)
        ]
        self._loops += [
            asyncio.create_task(self._prober_loop(target, url))
            for target, url in self.health
        ]

    async def stop(self) -> None:
        """No new requests; the submissions under way are waited for (each
        ends within its give-up time), the loops end after their request."""
        self._stopping.set()
        await asyncio.gather(*self._loops)
        await asyncio.gather(*list(self._submitting))

    async def close(self) -> None:
        await self._client.aclose()
        await self._prober.aclose()

    def all_ready(self) -> bool:
        """Whether the latest probe of every target answered 200."""
        return len(self.last_probe) == len(self.health) and all(
            probe.status == 200 for probe in self.last_probe.values()
        )

    async def read(self, response_id: str) -> Ending | None:
        """The run's ending, ``None`` while it has none (or the API could
        not say)."""
        try:
            response = await self._client.get(
                f"{self.api}/responses/{response_id}", headers=_HEADERS
            )
        except httpx.TransportError:
            return None
        if response.status_code == 404:
            return Ending(response_id, "missing")
        if response.status_code != 200:
            return None
        body = response.json()
        status = str(body.get("status"))
        if status not in ENDED:
            return None
        error = body.get("error") or None
        said = f"{error.get('code')}: {error.get('message')}" if error else None
        return Ending(response_id, status, said)

    async def first_completed_after(self, moment: float, within: float) -> float | None:
        """When the first run submitted at or after ``moment`` (monotonic)
        was seen completed; a run that ended otherwise passes the turn to
        the next one. ``None`` if none completed within ``within`` s."""
        deadline = time.monotonic() + within
        seen: set[str] = set()
        while time.monotonic() < deadline:
            candidate = next(
                (
                    s
                    for s in sorted(self.records.submissions, key=lambda s: s.sent)
                    if s.sent >= moment and s.response_id and s.response_id not in seen
                ),
                None,
            )
            if candidate is None or candidate.response_id is None:
                async with self._accepted:
                    try:
                        await asyncio.wait_for(
                            self._accepted.wait(), deadline - time.monotonic()
                        )
                    except TimeoutError:
                        return None
                continue
            ending = await self.read(candidate.response_id)
            if ending is None:
                await asyncio.sleep(POLL_EVERY)
            elif ending.status == "completed":
                return time.monotonic()
            else:
                seen.add(candidate.response_id)
        return None

    async def endings(
        self, within: float, log: Callable[[str], None], at_once: int = 8
    ) -> list[Ending]:
        """Every accepted run's ending, read again each second until all
        have ended or ``within`` seconds have passed; the rest are ``not
        ended`` (or ``missing``)."""
        ids = [s.response_id for s in self.records.submissions if s.response_id]
        found: dict[str, Ending] = {}
        slots = asyncio.Semaphore(at_once)

        async def look(response_id: str) -> None:
            async with slots:
                ending = await self.read(response_id)
            if ending is not None and ending.status != "missing":
                found[response_id] = ending

        deadline = time.monotonic() + within
        while True:
            waiting = [i for i in ids if i not in found]
            if not waiting:
                break
            await asyncio.gather(*(look(i) for i in waiting))
            left = [i for i in ids if i not in found]
            if not left or time.monotonic() > deadline:
                break
            log(f"{len(left)} of {len(ids)} accepted runs not ended yet")
            await asyncio.sleep(1.0)
        for response_id in ids:
            if response_id not in found:
                last = await self.read(response_id)
                missing = last is not None and last.status == "missing"
                found[response_id] = Ending(
                    response_id, "missing" if missing else "not ended"
                )
        return [found[i] for i in ids]
