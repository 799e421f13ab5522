"""Interrupt runs across real server processes sharing PostgreSQL."""

from __future__ import annotations

import contextlib
import threading

import httpx
import pytest
from conftest import LiveServer
from interrupt_app import RELEASE
from langgraph.checkpoint.postgres import PostgresSaver
from lgos_testkit import wait_until


@pytest.fixture
def servers(tmp_path, postgres_uri):
    # The one-shot schema setup a deployment runs before its API workers.
    with PostgresSaver.from_conn_string(postgres_uri) as saver:
        saver.setup()
    started = [
        LiveServer(
            tmp_path,
            factory="interrupt_app:create_app",
            env={"LGOS_TEST_PG_URI": postgres_uri},
        )
        for _ in range(2)
    ]
    yield started
    for server in started:
        server.stop()


def _pause(server: LiveServer) -> dict:
    response = httpx.post(
        f"{server.base_url}/responses",
        json={"model": "refund", "input": "Refund"},
        timeout=30,
    )
    assert response.status_code == 200
    return response.json()


def _resume_body(paused: dict, answer: str = "approve") -> dict:
    (call,) = paused["output"]
    return {
        "model": "refund",
        "previous_response_id": paused["id"],
        "input": [
            {
                "type": "function_call_output",
                "call_id": call["call_id"],
                "output": answer,
            }
        ],
    }


def _markers(server: LiveServer, suffix: str) -> list:
    return sorted(server.marker_dir.glob(f"answer-*.{suffix}"))


def _release_answers(server: LiveServer) -> None:
    (server.marker_dir / RELEASE).touch()


def test_two_processes_racing_one_resume_run_it_exactly_once(servers):
    first, second = servers
    paused = _pause(first)
    results: dict[str, httpx.Response] = {}

    def resume(name: str, server: LiveServer) -> None:
        results[name] = httpx.post(
            f"{server.base_url}/responses", json=_resume_body(paused), timeout=30
        )

    threads = [
        threading.Thread(target=resume, args=(name, server))
        for name, server in (("first", first), ("second", second))
    ]
    for thread in threads:
        thread.start()
    # The winner's answer is held: the loser is answered while it runs.
    wait_until(lambda: len(results) == 1, 60, "the losing resume's answer")
    _release_answers(first)
    for thread in threads:
        thread.join(timeout=60)

    statuses = sorted(r.status_code for r in results.values())
    assert statuses == [200, 409]
    loser = next(r for r in results.values() if r.status_code == 409)
    assert loser.json()["error"]["code"] in {"run_busy", "interrupt_state_conflict"}
    winner = next(r for r in results.values() if r.status_code == 200)
    assert winner.json()["output"][0]["content"][0]["text"] == "Refund approve."
    assert len(_markers(first, "finished")) == 1


def test_a_process_killed_mid_run_leaves_a_resumable_or_cleanly_conflicting_run(
    servers,
):
    doomed, survivor = servers
    paused = _pause(doomed)

    def resume_and_die() -> None:
        with contextlib.suppress(httpx.TransportError):  # killed under this request
            httpx.post(
                f"{doomed.base_url}/responses", json=_resume_body(paused), timeout=30
            )

    thread = threading.Thread(target=resume_and_die)
    thread.start()
    wait_until(lambda: bool(_markers(doomed, "started")), 60, "the answer to start")
    doomed.kill()  # while its answer is held
    thread.join(timeout=30)
    _release_answers(survivor)

    # The killed session released its advisory lock; exit durability kept the
    # checkpoint at the pause, so the answer resumes once, from the start.
    retry = httpx.post(
        f"{survivor.base_url}/responses", json=_resume_body(paused), timeout=30
    )
    again = httpx.post(
        f"{survivor.base_url}/responses", json=_resume_body(paused), timeout=30
    )

    assert retry.status_code == 200, retry.text
    assert retry.json()["output"][0]["content"][0]["text"] == "Refund approve."
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "interrupt_state_conflict"
    assert not _markers(doomed, "finished")[1:]  # at most the survivor's one finish
