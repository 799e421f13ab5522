"""The background fault suite: 40 runs in flight on two real ``lgos worker``
processes while one worker and the API are SIGKILLed and the other worker is
SIGTERMed; then a fresh API and worker finish them all.

Every run goes through a two-node graph whose second node is held until the
test releases it, so the faults strike runs mid-graph; each node leaves a
marker file before (``enter``) and after (``done``) its work, per run and
execution. Asserted: every Response ends ``completed`` with its own answer;
right after the faults no unfinished Response lacks a queued or running job;
the SIGTERMed worker exits cleanly; every run caught mid-graph is re-run, and
no completed node executes twice (runs are checkpointed in PostgreSQL, so a
re-run resumes at the node that was running).
"""

from __future__ import annotations

import logging
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from background_stack import TERMINAL, Stack, terminate
from lgos_testkit import wait_while_progressing

# 40 runs through killed and stopped processes: minutes on a busy machine.
pytestmark = pytest.mark.timeout(900)

logger = logging.getLogger(__name__)

RUNS = 40
CONCURRENCY = 8


def _orphans(stack: Stack) -> list[tuple[str, str]]:
    """Unfinished Responses with no job waiting or running for them."""
    return [
        (row[0], row[1])
        for row in stack.sql(
            "SELECT r.id, r.snapshot->>'status' FROM lgos_background_responses r "
            "WHERE NOT (r.snapshot->>'status' = ANY(%s)) AND NOT EXISTS ("
            " SELECT 1 FROM procrastinate_jobs j"
            " WHERE j.lock = r.id AND j.status IN ('todo', 'doing'))",
            (list(TERMINAL),),
        )
    ]


def _unfinished(stack: Stack) -> list[tuple[object, ...]]:
    """What the queue and the store say of every unfinished Response: its
    status, attempts started and handed back, its jobs' ids, statuses and
    workers, and whether each worker is still registered."""
    return stack.sql(
        "SELECT r.id, r.snapshot->>'status', r.attempts_started, "
        "r.attempts_handed_back, j.id, j.status, j.worker_id, j.attempts, "
        "EXISTS (SELECT 1 FROM procrastinate_workers w WHERE w.id = j.worker_id) "
        "FROM lgos_background_responses r "
        "LEFT JOIN procrastinate_jobs j ON j.lock = r.id "
        "WHERE NOT (r.snapshot->>'status' = ANY(%s))",
        (list(TERMINAL),),
    )


def _started(stack: Stack, tags: list[str]) -> int:
    return sum(1 for tag in tags if stack.markers_of("started", tag))


def test_forty_runs_survive_killed_and_stopped_workers_and_a_killed_api(
    tmp_path, postgres_uri, bytecode_cache
):
    began = time.monotonic()
    stack = Stack(
        tmp_path,
        postgres_uri,
        bytecode_cache,
        LGOS_BACKGROUND_CONCURRENCY=str(CONCURRENCY),
        # Full at CONCURRENCY runs each: no slot kept for urgent work.
        LGOS_BACKGROUND_RESERVED_SLOTS="0",
        LGOS_WORKER_SHUTDOWN_TIMEOUT="1",
    )
    try:
        stack.start_api()
        killed, stopped = stack.start_worker(), stack.start_worker()
        client = stack.client()
        tags = [uuid.uuid4().hex[:8] for _ in range(RUNS)]
        submitted = {
            tag: client.responses.create(
                model="steps",
                input=tag,
                background=True,
                extra_headers={"Idempotency-Key": f"fault-{tag}"},
            ).id
            for tag in tags
        }
        # Both workers are full: 2 x CONCURRENCY runs are held mid-graph.
        wait_while_progressing(
            lambda: _started(stack, tags), 2 * CONCURRENCY, 120, "full workers"
        )

        killed.kill()
        stack.kill_api()
        terminate(stopped)
        stopped_exit = stopped.wait(timeout=60)
        orphans_after_faults = _orphans(stack)
        stack.start_api()
        # The fresh worker must pick up handed-back, queued and stalled runs.
        stack.start_worker()
        (tmp_path / "release-all").touch()
        client = stack.client()
        final = {}

        def ended() -> int:
            for tag, response_id in submitted.items():
                if tag not in final:
                    response = client.responses.retrieve(response_id)
                    if response.status in TERMINAL:
                        final[tag] = response
            return len(final)

        # A busy CI machine ends the 40 runs slowly: fail only when none ends
        # for two minutes, not when all take longer than some total.
        try:
            wait_while_progressing(ended, RUNS, 120, "every Response to end", 0.2)
        except TimeoutError as stuck:
            raise AssertionError(f"{stuck}; unfinished: {_unfinished(stack)}") from None
        retry = client.responses.create(
            model="steps",
            input=tags[0],
            background=True,
            extra_headers={"Idempotency-Key": f"fault-{tags[0]}"},
        )
    finally:
        stack.stop()

    wall = time.monotonic() - began
    # Runs whose held node was entered again: those the faults caught mid-graph.
    restarted = [t for t in tags if len(stack.markers_of("enter-second", t)) > 1]
    executed_twice = [
        (tag, node)
        for tag in tags
        for node in ("first", "second")
        if len(stack.markers_of(f"done-{node}", tag)) > 1
    ]
    completed = sum(1 for r in final.values() if r.status == "completed")
    logger.warning(  # the figures to report (pytest -o log_cli=true)
        "fault suite: completed %d/%d, completed nodes executed twice %d, "
        "restarted %d, orphans %d, wall %.0f s",
        completed,
        RUNS,
        len(executed_twice),
        len(restarted),
        len(orphans_after_faults),
        wall,
    )
    assert stopped_exit == 0
    assert orphans_after_faults == []
    assert {tag: r.status for tag, r in final.items()} == dict.fromkeys(
        tags, "completed"
    )
    assert all(final[tag].output_text == f"Both steps of {tag}." for tag in tags)
    # Both workers' runs were caught in their second node, then re-run ...
    assert len(restarted) == 2 * CONCURRENCY
    # ... from there: the first node, completed before the faults, never again.
    assert executed_twice == []
    assert [t for t in tags if len(stack.markers_of("enter-first", t)) != 1] == []
    assert [t for t in tags if len(stack.markers_of("done-second", t)) != 1] == []
    assert retry.id == submitted[tags[0]]
    assert _orphans(stack) == []


RACES = 30
CONFLICTS = {"run_busy", "interrupt_state_conflict"}


def _resume(
    base_url: str, paused: dict, verdict: str, kind: str = "background"
) -> httpx.Response:
    """Answer the pause: ``background``, ``foreground`` or ``stream``."""
    (call,) = paused["output"]
    return httpx.post(
        f"{base_url}/responses",
        json={
            "model": "refund",
            "background": kind == "background",
            "stream": kind == "stream",
            "previous_response_id": paused["id"],
            "input": [
                {
                    "type": "function_call_output",
                    "call_id": call["call_id"],
                    "output": verdict,
                }
            ],
        },
        timeout=60,
    )


def _race(
    stack: Stack, other_api: str, paused: list[dict]
) -> list[list[httpx.Response]]:
    """Each pause answered twice at once in the background: through the
    stack's API and through ``other_api``."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return [
            list(
                pool.map(
                    lambda racer, p=p: _resume(racer[0], p, racer[1]),
                    [(stack.base_url, "approve"), (other_api, "deny")],
                )
            )
            for p in paused
        ]


def _accepted_in_background(race: list[httpx.Response]) -> list[str]:
    return [
        a.json()["id"]
        for a in race
        if a.status_code == 200
        and a.headers["content-type"].startswith("application/json")
        and a.json()["background"]
    ]


def _report(what: str, races: list, ends: list) -> tuple[list, list]:
    refused = [a.json()["error"]["code"] for race in races for a in race if a.is_error]
    late = [
        (end.status, end.error.code if end.error else None)
        for race_ends in ends
        for end in race_ends
        if end.status != "completed"
    ]
    logger.warning(  # the figures to report (pytest -o log_cli=true)
        "%s: %d pairs, refused at submit %d %s, accepted and lost later %d %s",
        what,
        RACES,
        len(refused),
        sorted(set(refused)),
        len(late),
        late,
    )
    return refused, late


def test_racing_background_resumes_through_two_apis_have_one_winner_each(
    tmp_path, postgres_uri, bytecode_cache
):
    """Each pause is resumed twice at once in the background, through two
    API processes, while a worker runs what is accepted. The loser is refused
    at submit (409): no loser is accepted and fails later, and every pause
    is answered once."""
    stack = Stack(tmp_path, postgres_uri, bytecode_cache)
    try:
        stack.start_api()
        _, other_api = stack.another_api()
        stack.start_worker()
        client = stack.client()
        pauses = [
            client.responses.create(model="refund", input="Refund", background=True)
            for _ in range(RACES)
        ]
        paused = [
            stack.wait_status(p.id, {"completed"}).model_dump(mode="json")
            for p in pauses
        ]
        races = _race(stack, other_api, paused)
        ends = [
            [stack.wait_status(i, TERMINAL) for i in _accepted_in_background(race)]
            for race in races
        ]
    finally:
        stack.stop()

    refused, late = _report("racing background resumes", races, ends)
    assert sorted({a.status_code for race in races for a in race}) == [200, 409]
    assert set(refused) <= CONFLICTS
    assert late == []
    assert [[end.status for end in e] for e in ends] == [["completed"]] * RACES
    assert len(refused) == RACES
    assert len(list(tmp_path.glob("answer-*"))) == RACES


def test_an_accepted_background_resume_keeps_its_pause_across_processes(
    tmp_path, postgres_uri, bytecode_cache
):
    """Each pause is answered by a background resume through one API process,
    then, while that one waits in the queue (no worker runs yet), by a
    background, foreground or streamed resume through another. The accepted
    resume holds its pause: the later one, whichever kind, gets its 409 at
    once, instead of running and leaving the accepted one to fail when its
    job starts."""
    stack = Stack(tmp_path, postgres_uri, bytecode_cache)
    kinds = ["background", "foreground", "stream"] * (RACES // 3)
    try:
        stack.start_api()
        _, other_api = stack.another_api()
        client = stack.client()
        paused = [
            client.responses.create(model="refund", input="Refund").model_dump(
                mode="json"
            )
            for _ in range(RACES)
        ]
        pairs = []
        for pause, kind in zip(paused, kinds, strict=True):
            first = _resume(stack.base_url, pause, "approve")
            pairs.append([first, _resume(other_api, pause, "deny", kind)])
        stack.start_worker()
        ends = [
            [stack.wait_status(i, TERMINAL) for i in _accepted_in_background(pair)]
            for pair in pairs
        ]
    finally:
        stack.stop()

    refused, late = _report("resumes after an accepted one", pairs, ends)
    assert [first.status_code for first, _ in pairs] == [200] * RACES
    assert [second.status_code for _, second in pairs] == [409] * RACES
    assert set(refused) == {"run_busy"}
    assert late == []
    assert [[end.status for end in e] for e in ends] == [["completed"]] * RACES
    assert len(list(tmp_path.glob("answer-approve-*"))) == RACES
    assert list(tmp_path.glob("answer-deny-*")) == []
