"""Tenants are isolated by default: ``lgos serve`` with API keys and no code.

Twelve cross-tenant attempts: ten reach for another tenant's background,
paused or paused-background run (retrieve, stream, stream from a sequence
number, cancel, resume streamed, foreground or in the background) and answer
exactly like an id that never existed (404, never 403); two reuse another
tenant's ``Idempotency-Key`` and get a run of their own (never the other's
Response, never a 422 revealing the key was used). A third key lets each
idempotency attempt come from a tenant with no record of that key. The
owner's runs are untouched by the attempts."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import openai
import pytest
from conftest import LgosServe, start_lgos_serve
from fastapi import Request
from langgraph_openai_serve import (
    GraphConfigurationError,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from lgos_testkit import wait_until
from support import config, scripted_graph

KEYS = json.dumps({"sk-alice": "alice", "sk-bob": "bob", "sk-carol": "carol"})


class Tenants:
    """``lgos serve`` with three keys, and one OpenAI client per key."""

    def __init__(self, server: LgosServe) -> None:
        self.server = server
        self.clients = {
            name: openai.OpenAI(
                base_url=server.base_url, api_key=f"sk-{name}", max_retries=0
            )
            for name in ("alice", "bob", "carol")
        }

    def close(self) -> None:
        for client in self.clients.values():
            client.close()
        self.server.process.stop()


@pytest.fixture(scope="module")
def tenants(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tenants]:
    served = Tenants(
        start_lgos_serve(
            tmp_path_factory.mktemp("tenancy"),
            "tenancy_app:registry",
            LGOS_API_KEYS=KEYS,
        )
    )
    yield served
    served.close()


def _answers(paused: Any, answer: str) -> list[dict[str, str]]:
    (call,) = [item for item in paused.output if item.type == "function_call"]
    return [{"type": "function_call_output", "call_id": call.call_id, "output": answer}]


def _settled(client: openai.OpenAI, response_id: str) -> Any:
    def done() -> bool:
        status = client.responses.retrieve(response_id).status
        return status not in ("queued", "in_progress")

    wait_until(done, 20, f"background response {response_id} to finish")
    return client.responses.retrieve(response_id)


@pytest.fixture(scope="module")
def alice_runs(tenants: Tenants) -> Iterator[dict[str, Any]]:
    """What Alice owns: a background run in progress, a finished background
    note sent with an Idempotency-Key, a paused run and a paused background run."""
    alice = tenants.clients["alice"]
    running = alice.responses.create(model="forever", input="wait", background=True)
    wait_until(
        lambda: alice.responses.retrieve(running.id).status == "in_progress",
        20,
        "Alice's background run to start",
    )
    noted = alice.responses.create(
        model="notes",
        input="milk",
        background=True,
        extra_headers={"Idempotency-Key": "groceries"},
    )
    paused = alice.responses.create(model="refund", input="Refund order 7")
    paused_in_background = _settled(
        alice,
        alice.responses.create(model="refund", input="Refund 8", background=True).id,
    )
    yield {
        "running": running,
        "noted": _settled(alice, noted.id),
        "paused": paused,
        "paused_in_background": paused_in_background,
    }
    alice.responses.cancel(running.id)


def _resume(client: openai.OpenAI, paused: Any, **extra: Any) -> Any:
    return client.responses.create(
        model="refund",
        previous_response_id=paused.id,
        input=_answers(paused, "approve"),
        **extra,
    )


def _drain(stream: Any) -> None:
    for _ in stream:
        pass


Attempt = Callable[[openai.OpenAI, dict[str, Any]], Any]

NOT_FOUND_ATTEMPTS: dict[str, Attempt] = {
    "retrieve a running background response": lambda bob, runs: bob.responses.retrieve(
        runs["running"].id
    ),
    "stream a running background response": lambda bob, runs: _drain(
        bob.responses.retrieve(runs["running"].id, stream=True)
    ),
    "stream it from a sequence number": lambda bob, runs: _drain(
        bob.responses.retrieve(runs["running"].id, stream=True, starting_after=0)
    ),
    "cancel a running background response": lambda bob, runs: bob.responses.cancel(
        runs["running"].id
    ),
    "retrieve a finished background response": lambda bob, runs: bob.responses.retrieve(
        runs["noted"].id
    ),
    "retrieve a paused background response": lambda bob, runs: bob.responses.retrieve(
        runs["paused_in_background"].id
    ),
    "resume a paused run": lambda bob, runs: _resume(bob, runs["paused"]),
    "resume a paused run streaming": lambda bob, runs: _drain(
        _resume(bob, runs["paused"], stream=True)
    ),
    "resume a paused run in the background": lambda bob, runs: _resume(
        bob, runs["paused"], background=True
    ),
    "resume a paused background run": lambda bob, runs: _resume(
        bob, runs["paused_in_background"]
    ),
}


@pytest.mark.parametrize("attempt", NOT_FOUND_ATTEMPTS)
def test_another_tenants_runs_answer_404(
    tenants: Tenants, alice_runs: dict[str, Any], attempt: str
) -> None:
    bob = tenants.clients["bob"]

    with pytest.raises(openai.NotFoundError) as refused:
        NOT_FOUND_ATTEMPTS[attempt](bob, alice_runs)

    assert refused.value.status_code == 404
    assert refused.value.body["code"] == "response_not_found"


@pytest.mark.parametrize(("tenant", "same_body"), [("bob", True), ("carol", False)])
def test_another_tenants_idempotency_key_starts_a_run_of_ones_own(
    tenants: Tenants, alice_runs: dict[str, Any], tenant: str, same_body: bool
) -> None:
    client = tenants.clients[tenant]

    mine = client.responses.create(
        model="notes",
        input="milk" if same_body else "bread",
        background=True,
        extra_headers={"Idempotency-Key": "groceries"},
    )

    assert mine.id != alice_runs["noted"].id
    assert _settled(client, mine.id).output_text == (
        "Noted: milk" if same_body else "Noted: bread"
    )


def test_the_owner_still_has_every_run_after_the_attempts(
    tenants: Tenants, alice_runs: dict[str, Any]
) -> None:
    alice, bob = tenants.clients["alice"], tenants.clients["bob"]
    for attempt in NOT_FOUND_ATTEMPTS.values():
        with pytest.raises(openai.NotFoundError):
            attempt(bob, alice_runs)

    resumed = _resume(alice, alice_runs["paused"])
    resumed_background = _resume(alice, alice_runs["paused_in_background"])
    again = alice.responses.create(
        model="notes",
        input="milk",
        background=True,
        extra_headers={"Idempotency-Key": "groceries"},
    )

    assert alice.responses.retrieve(alice_runs["running"].id).status == "in_progress"
    assert resumed.output_text == "Refund approve."
    assert resumed_background.output_text == "Refund approve."
    assert again.id == alice_runs["noted"].id


async def _scopes(settings: Settings, *headers: dict[str, str]) -> list[str]:
    server = LanggraphOpenaiServe(
        graphs=GraphRegistry(registry={"m": config(scripted_graph("x"))}),
        settings=settings,
    ).bind_openai_api()

    @server.openai_app.get("/scope")
    async def scope(request: Request) -> str:
        return await server.openai_app.state.lgos.scope_for(request)

    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server.app), base_url="http://t"
    ) as http:
        return [(await http.get("/v1/scope", headers=each)).json() for each in headers]


ALICE = {"Authorization": "Bearer sk-alice"}
BOB = {"Authorization": "Bearer sk-bob"}


@pytest.mark.anyio
async def test_each_principal_is_its_own_scope_by_default() -> None:
    assert await _scopes(Settings(API_KEYS=KEYS), ALICE, BOB) == ["alice", "bob"]
    assert await _scopes(Settings(), {}) == ["default"]


@pytest.mark.anyio
async def test_the_scope_setting_shares_one_scope_or_names_a_resolver() -> None:
    shared = Settings(API_KEYS=KEYS, CHECKPOINT_SCOPE="none")
    custom = Settings(API_KEYS=KEYS, CHECKPOINT_SCOPE="tenancy_app:team_scope")

    assert await _scopes(shared, ALICE, BOB) == ["default", "default"]
    assert await _scopes(custom, {**ALICE, "x-team": "red"}, BOB) == ["red", "no-team"]


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("tenancy_app", "must be 'module:callable' or 'none'"),
        ("no_such_module:scope", "cannot be loaded"),
        ("tenancy_app:missing", "cannot be loaded"),
        ("conftest:TESTS_DIR", "is not callable"),
    ],
)
def test_a_bad_scope_setting_fails_when_the_server_is_built(
    setting: str, message: str
) -> None:
    with pytest.raises(GraphConfigurationError, match=message):
        LanggraphOpenaiServe(
            graphs=GraphRegistry(registry={"m": config(scripted_graph("x"))}),
            settings=Settings(CHECKPOINT_SCOPE=setting),
        )
