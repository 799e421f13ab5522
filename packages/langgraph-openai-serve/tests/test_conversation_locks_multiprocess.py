"""One turn at a time on a Conversation across real processes sharing
PostgreSQL: two ``lgos serve`` and an ``lgos worker``
(``LGOS_RESPONSE_STORE=postgres``).

Every turn runs the ``hold`` graph of ``background_app``, which waits for
the test's ``release-<tag>`` file, so racing requests overlap for sure.
Asserted: of requests racing on one Conversation (foreground, streamed and
background, through both APIs) exactly one runs and the others get OpenAI's
400 ``conversation_locked`` with nothing stored; a client leaving a stream
ends its turn at once; a SIGKILLed API's lock lapses after
``LGOS_CONVERSATION_LOCK_SECONDS``; a background turn whose worker is
SIGKILLed keeps the Conversation until its re-run ends.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from background_stack import Stack
from lgos_testkit import wait_until

pytestmark = pytest.mark.timeout(600)

logger = logging.getLogger(__name__)

LOCK_SECONDS = 4
ROUNDS = 10
LOCKED = {
    "message": "Another process is currently operating on this conversation. "
    "Please retry in a few seconds.",
    "type": "invalid_request_error",
    "param": "conversation",
    "code": "conversation_locked",
}


def _stack(tmp_path, postgres_uri, bytecode_cache) -> Stack:
    return Stack(
        tmp_path,
        postgres_uri,
        bytecode_cache,
        LGOS_RESPONSE_STORE="postgres",
        LGOS_CONVERSATION_LOCK_SECONDS=str(LOCK_SECONDS),
    )


def _turn(base_url: str, conversation: str, tag: str, **extra: Any) -> httpx.Response:
    body = {"model": "hold", "input": tag, "conversation": conversation, **extra}
    return httpx.post(f"{base_url}/responses", json=body, timeout=120)


def _streamed_turn(base_url: str, conversation: str, tag: str) -> httpx.Response:
    """A streamed turn, read to its end (its events as the body)."""
    body = {"model": "hold", "input": tag, "conversation": conversation}
    with httpx.stream(
        "POST", f"{base_url}/responses", json={**body, "stream": True}, timeout=120
    ) as answer:
        answer.read()
    return answer


def _items(stack: Stack, conversation: str) -> list[tuple[str, str]]:
    listed = stack.client().conversations.items.list(conversation, order="asc")
    return [(item.role, item.content[0].text) for item in listed.data]


def _kept_responses(stack: Stack, conversation: str) -> int:
    ((count,),) = stack.sql(
        "SELECT count(*) FROM lgos_background_responses "
        "WHERE snapshot->'conversation'->>'id' = %s",
        (conversation,),
    )
    return int(count)


def _claim(stack: Stack, conversation: str) -> tuple[Any, ...]:
    ((holder, ended),) = stack.sql(
        "SELECT turn_holder, turn_expires_at IS NULL FROM lgos_conversations "
        "WHERE id = %s",
        (conversation,),
    )
    return holder, ended


Racer = Callable[[str, str], httpx.Response]


def _race(
    racers: dict[str, Racer], conversation: str, tag: str
) -> tuple[dict[str, httpx.Response], list[threading.Thread]]:
    """Start every racer at once on ``conversation``; return once all but
    one are answered (the winner's turn is held): the answers so far and the
    racers' threads."""
    answers: dict[str, httpx.Response] = {}
    start = threading.Barrier(len(racers))

    def race(name: str) -> None:
        start.wait()
        answers[name] = racers[name](conversation, tag)

    threads = [threading.Thread(target=race, args=(name,)) for name in racers]
    for thread in threads:
        thread.start()
    wait_until(
        lambda: (
            sum(a.status_code == 400 for a in list(answers.values())) == len(racers) - 1
        ),
        60,
        "the losing turns' answers",
    )
    return answers, threads


def _turn_until_killed(base_url: str, conversation: str, tag: str) -> None:
    with contextlib.suppress(httpx.TransportError):  # its server is killed
        _turn(base_url, conversation, tag)


def test_racing_turns_through_two_apis_run_one_at_a_time(
    tmp_path, postgres_uri, bytecode_cache
):
    stack = _stack(tmp_path, postgres_uri, bytecode_cache)
    winners: list[str] = []
    refusals: list[dict[str, Any]] = []
    try:
        stack.start_api()
        _, other = stack.another_api()
        stack.start_worker()
        racers: dict[str, Racer] = {
            "foreground": lambda c, t: _turn(stack.base_url, c, t),
            "streamed": lambda c, t: _streamed_turn(other, c, t),
            "background": lambda c, t: _turn(other, c, t, background=True),
        }
        for _ in range(ROUNDS):
            tag = uuid.uuid4().hex[:8]
            conversation = stack.client().conversations.create().id
            answers, threads = _race(racers, conversation, tag)
            refused = {n for n, a in answers.items() if a.status_code == 400}
            (winner,) = set(racers) - refused
            stack.release(tag)
            for thread in threads:
                thread.join(timeout=120)
            won = answers[winner]
            assert won.status_code == 200, won.text
            if winner == "background":
                stack.wait_status(won.json()["id"], {"completed"})
            winners.append(winner)
            refusals += [answers[n].json()["error"] for n in refused]
            assert _items(stack, conversation) == [
                ("user", tag),
                ("assistant", f"Held {tag}."),
            ]
            # Nothing of the refused turns was kept, and only one ran.
            assert _kept_responses(stack, conversation) == 1
            assert len(stack.markers_of("started", tag)) == 1

        # A client that leaves a stream ends its turn at once (not by lapse).
        conversation = stack.client().conversations.create().id
        tag = uuid.uuid4().hex[:8]
        body = {"model": "hold", "input": tag, "conversation": conversation}
        with httpx.stream(
            "POST", f"{other}/responses", json={**body, "stream": True}, timeout=60
        ) as stream:
            next(stream.iter_lines())
            stack.wait_marker("started", tag)
        wait_until(lambda: _claim(stack, conversation)[1], 60, "the left turn to end")
        stack.release("after-leaving")
        after = _turn(stack.base_url, conversation, "after-leaving")
    finally:
        stack.stop()

    logger.warning(  # the figures to report (pytest -o log_cli=true)
        "racing turns: %d rounds of %d, winners %s, refused %d",
        ROUNDS,
        len(racers),
        {name: winners.count(name) for name in racers},
        len(refusals),
    )
    assert len(winners) == ROUNDS
    assert refusals == [LOCKED] * (ROUNDS * (len(racers) - 1))
    assert after.status_code == 200, after.text


def test_a_dead_processs_turn_lapses_and_a_dead_workers_turn_holds_until_rerun(
    tmp_path, postgres_uri, bytecode_cache
):
    stack = _stack(tmp_path, postgres_uri, bytecode_cache)
    try:
        stack.start_api()
        doomed, doomed_url = stack.another_api()
        worker = stack.start_worker()
        client = stack.client()

        # An API process SIGKILLed mid-turn: its lock lapses.
        conversation = client.conversations.create().id
        thread = threading.Thread(
            target=_turn_until_killed, args=(doomed_url, conversation, "killed")
        )
        thread.start()
        stack.wait_marker("started", "killed")
        refused_while_alive = _turn(stack.base_url, conversation, "next")
        doomed.kill()
        doomed.wait(timeout=30)
        thread.join(timeout=60)
        killed_at = time.monotonic()
        accepted: list[httpx.Response] = []

        def next_turn_runs() -> bool:
            answer = _turn(stack.base_url, conversation, "next")
            if answer.status_code == 400:
                assert answer.json()["error"] == LOCKED
                return False
            accepted.append(answer)
            return True

        stack.release("next")
        wait_until(next_turn_runs, 120, "the dead process's lock to lapse", 0.25)
        lapsed_after = time.monotonic() - killed_at
        after_kill = _items(stack, conversation)

        # A worker SIGKILLed mid-turn: its Response holds the Conversation
        # (not a lease) until the re-run ends.
        conversation = client.conversations.create().id
        job = client.responses.create(
            model="hold", input="rerun", conversation=conversation, background=True
        )
        stack.wait_marker("started", "rerun")
        worker.kill()
        worker.wait(timeout=30)
        holder, lease_ended = _claim(stack, conversation)
        while_dead = _turn(stack.base_url, conversation, "meanwhile")
        stack.start_worker()
        wait_until(
            lambda: len(stack.markers_of("started", "rerun")) == 2,
            120,
            "the re-run to start",
        )
        while_rerun = _turn(stack.base_url, conversation, "meanwhile")
        stack.release("rerun")
        final = stack.wait_status(job.id, {"completed", "failed"}, timeout=120)
        stack.release("meanwhile")
        after_rerun = _turn(stack.base_url, conversation, "meanwhile")
        rerun_items = _items(stack, conversation)
    finally:
        stack.stop()

    logger.warning(
        "dead API's lock lapsed %.1f s after the kill (lease %d s)",
        lapsed_after,
        LOCK_SECONDS,
    )
    assert refused_while_alive.json()["error"] == LOCKED
    assert accepted[0].status_code == 200, accepted[0].text
    assert after_kill == [("user", "next"), ("assistant", "Held next.")]
    # The background turn's lease ended at submit: its Response held it.
    assert (holder, lease_ended) == (job.id, True)
    assert while_dead.json()["error"] == LOCKED
    assert while_rerun.json()["error"] == LOCKED
    assert final.status == "completed"
    assert after_rerun.status_code == 200, after_rerun.text
    assert rerun_items == [
        ("user", "rerun"),
        ("assistant", "Held rerun."),
        ("user", "meanwhile"),
        ("assistant", "Held meanwhile."),
    ]
