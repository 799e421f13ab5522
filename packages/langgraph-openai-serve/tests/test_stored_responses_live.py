"""Kept Responses and Conversations on PostgreSQL: ``lgos serve`` with two
API keys, the official SDK over TCP, tenant isolation and ``lgos
responses-cleanup``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import openai
import psycopg
import pytest
from conftest import TESTS_DIR, LgosServe, start_lgos_serve
from lgos_testkit import wait_for_response

KEYS = json.dumps({"sk-alice": "alice", "sk-bob": "bob"})


class Served:
    def __init__(self, server: LgosServe, env: dict[str, str], uri: str) -> None:
        self.server = server
        self.env = env
        self.uri = uri
        self.alice = openai.OpenAI(
            base_url=server.base_url, api_key="sk-alice", max_retries=0
        )
        self.bob = openai.OpenAI(
            base_url=server.base_url, api_key="sk-bob", max_retries=0
        )

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.uri, autocommit=True) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def lgos(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "langgraph_openai_serve.cli", *args],
            env=self.env,
            check=True,
            timeout=120,
            capture_output=True,
            text=True,
        )
        return done.stdout


@pytest.fixture(scope="module")
def served(tmp_path_factory, postgres_uri) -> Iterator[Served]:
    store = {"LGOS_RESPONSE_STORE": "postgres", "LGOS_DATABASE_URL": postgres_uri}
    env = {**os.environ, "PYTHONPATH": str(TESTS_DIR), **store}
    subprocess.run(
        [sys.executable, "-m", "langgraph_openai_serve.cli", "db-setup"],
        env=env,
        check=True,
        timeout=120,
    )
    server = start_lgos_serve(
        tmp_path_factory.mktemp("stored"),
        "stored_app:registry",
        LGOS_API_KEYS=KEYS,
        **store,
    )
    running = Served(server, env, postgres_uri)
    yield running
    running.alice.close()
    running.bob.close()
    server.process.stop()


def not_found_bodies(attempts: dict[str, Any]) -> dict[str, Any]:
    """Each attempt must fail with 404: the error bodies, by attempt."""
    answers = {}
    for name, attempt in attempts.items():
        with pytest.raises(openai.NotFoundError) as caught:
            attempt()
        answers[name] = caught.value.body
    return answers


def test_three_turns_kept_retrieved_listed_and_deleted(served):
    alice = served.alice
    first = alice.responses.create(model="history", input="My name is Ada.")
    with alice.responses.stream(
        model="history", input="I like tea.", previous_response_id=first.id
    ) as stream:
        second = stream.get_final_response()
    third = alice.responses.create(
        model="history", input="Who am I?", previous_response_id=second.id
    )

    assert third.output_text == "Saw " + " | ".join(
        [
            "human:My name is Ada.",
            f"ai:{first.output_text}",
            "human:I like tea.",
            f"ai:{second.output_text}",
            "human:Who am I?",
        ]
    )
    assert alice.responses.retrieve(first.id) == first
    assert alice.responses.retrieve(third.id) == third
    assert alice.responses.retrieve(second.id).output_text == second.output_text
    items = alice.responses.input_items.list(third.id, order="asc")
    assert [item.content[0].text for item in items.data] == [
        "My name is Ada.",
        first.output_text,
        "I like tea.",
        second.output_text,
        "Who am I?",
    ]
    alice.responses.delete(third.id)
    with pytest.raises(openai.NotFoundError):
        alice.responses.retrieve(third.id)
    assert served.sql(
        "SELECT count(*) FROM lgos_background_responses WHERE id = %s", third.id
    ) == [(0,)]


def test_another_tenant_gets_404_for_everything(served):
    kept = served.alice.responses.create(model="history", input="Alice's secret")
    bob = served.bob

    attempts = {
        "retrieve": lambda: bob.responses.retrieve(kept.id),
        "delete": lambda: bob.responses.delete(kept.id),
        "input_items": lambda: bob.responses.input_items.list(kept.id),
        "previous_response_id": lambda: bob.responses.create(
            model="history", input="Tell me", previous_response_id=kept.id
        ),
    }
    answers = not_found_bodies(attempts)

    assert "Alice's secret" not in json.dumps(answers)
    assert answers["previous_response_id"]["param"] == "previous_response_id"
    assert served.alice.responses.retrieve(kept.id) == kept


def test_cleanup_deletes_expired_responses_with_their_events_and_items(served):
    alice = served.alice
    old = alice.responses.create(model="history", input="Long ago")
    job = alice.responses.create(model="notes", input="Old job", background=True)
    wait_for_response(alice, job.id, {"completed"})
    recent = alice.responses.create(model="history", input="Just now")
    assert served.sql(
        "SELECT count(*) FROM lgos_background_events WHERE response_id = %s", job.id
    ) != [(0,)]
    served.sql(
        "UPDATE lgos_background_responses SET created_at = now() - interval '31 days' "
        "WHERE id = ANY(%s)",
        [old.id, job.id],
    )

    output = served.lgos("responses-cleanup")

    assert output == "deleted 2 expired responses\n"
    assert served.sql(
        "SELECT count(*) FROM lgos_background_responses WHERE id = ANY(%s)",
        [old.id, job.id],
    ) == [(0,)]
    assert served.sql(
        "SELECT count(*) FROM lgos_background_events WHERE response_id = %s", job.id
    ) == [(0,)]
    assert alice.responses.retrieve(recent.id) == recent


def test_a_conversation_on_postgres_holds_every_turn_until_deleted(served):
    alice = served.alice
    conversation = alice.conversations.create(
        items=[{"role": "user", "content": "My name is Ada."}],
        metadata={"topic": "names"},
    )
    first = alice.responses.create(
        model="history", input="I like tea.", conversation=conversation.id
    )
    with alice.responses.stream(
        model="history", input="Who am I?", conversation=conversation.id
    ) as stream:
        second = stream.get_final_response()
    queued = alice.responses.create(
        model="notes", input="Again?", conversation=conversation.id, background=True
    )
    third = wait_for_response(alice, queued.id, {"completed"})

    assert second.output_text == "Saw " + " | ".join(
        [
            "human:My name is Ada.",
            "human:I like tea.",
            f"ai:{first.output_text}",
            "human:Who am I?",
        ]
    )
    assert third.output_text.endswith(f"ai:{second.output_text} | human:Again?")
    items = alice.conversations.items.list(conversation.id, order="asc", limit=2)
    assert [item.content[0].text for item in items] == [
        "My name is Ada.",
        "I like tea.",
        first.output_text,
        "Who am I?",
        second.output_text,
        "Again?",
        third.output_text,
    ]
    alice.conversations.delete(conversation.id)
    assert served.sql(
        "SELECT count(*) FROM lgos_conversation_items WHERE conversation_id = %s",
        conversation.id,
    ) == [(0,)]
    # The Responses stay: deleting a Conversation deletes its items only.
    assert alice.responses.retrieve(second.id).output_text == second.output_text


def test_another_tenant_gets_404_for_every_conversation_route(served):
    alice, bob = served.alice, served.bob
    conversation = alice.conversations.create(
        items=[{"id": "msg_secret", "role": "user", "content": "Alice's secret"}]
    )
    cid = conversation.id

    attempts = {
        "retrieve": lambda: bob.conversations.retrieve(cid),
        "update": lambda: bob.conversations.update(cid, metadata={"by": "bob"}),
        "delete": lambda: bob.conversations.delete(cid),
        "items.list": lambda: bob.conversations.items.list(cid),
        "items.create": lambda: bob.conversations.items.create(
            cid, items=[{"role": "user", "content": "Bob was here"}]
        ),
        "items.retrieve": lambda: bob.conversations.items.retrieve(
            "msg_secret", conversation_id=cid
        ),
        "items.delete": lambda: bob.conversations.items.delete(
            "msg_secret", conversation_id=cid
        ),
        "responses.create": lambda: bob.responses.create(
            model="history", input="Tell me", conversation=cid
        ),
    }
    answers = not_found_bodies(attempts)

    assert "Alice's secret" not in json.dumps(answers)
    assert answers["responses.create"]["param"] == "conversation"
    assert alice.conversations.retrieve(cid) == conversation
    items = alice.conversations.items.list(cid)
    assert [item.content[0].text for item in items.data] == ["Alice's secret"]
