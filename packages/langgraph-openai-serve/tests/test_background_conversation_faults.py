"""A background run with ``conversation`` whose worker is SIGKILLed in the
window between adding the run's turn to the Conversation and storing the
run's end: the re-run on another worker adds its turn again, and the
Conversation must hold one turn, the one the Response's final snapshot holds.

The window is opened on purpose: a PostgreSQL trigger makes the worker's
"completed" snapshot wait on an advisory lock the test holds. The turn is
committed by then; the test kills the worker and ends its waiting statement
(as if it had never been sent), then lets a fresh worker re-run the job.
"""

from __future__ import annotations

import uuid

import psycopg
import pytest
from background_stack import Stack
from lgos_testkit import wait_until

pytestmark = pytest.mark.timeout(600)

HOLD_KEY = 4242
"""The advisory lock the held snapshot waits on."""

HOLD_COMPLETED_SNAPSHOTS = f"""
CREATE OR REPLACE FUNCTION lgos_test_hold_completed() RETURNS trigger AS $$
BEGIN
    IF NEW.snapshot->>'status' = 'completed' THEN
        PERFORM pg_advisory_xact_lock({HOLD_KEY});
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE OR REPLACE TRIGGER lgos_test_hold_completed
    BEFORE UPDATE ON lgos_background_responses
    FOR EACH ROW EXECUTE FUNCTION lgos_test_hold_completed();
"""
RELEASE_COMPLETED_SNAPSHOTS = """
DROP TRIGGER IF EXISTS lgos_test_hold_completed ON lgos_background_responses;
DROP FUNCTION IF EXISTS lgos_test_hold_completed();
"""
WAITING_ON_HOLD = (
    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' "
    f"AND classid = 0 AND objid = {HOLD_KEY} AND NOT granted"
)


def test_a_run_re_run_after_its_worker_died_mid_commit_leaves_one_turn(
    tmp_path, postgres_uri, bytecode_cache
):
    stack = Stack(
        tmp_path, postgres_uri, bytecode_cache, LGOS_RESPONSE_STORE="postgres"
    )
    holder = psycopg.connect(postgres_uri, autocommit=True)
    try:
        stack.sql(HOLD_COMPLETED_SNAPSHOTS)
        holder.execute("SELECT pg_advisory_lock(%s)", (HOLD_KEY,))
        stack.start_api()
        lost_worker = stack.start_worker()
        client = stack.client()
        tag = uuid.uuid4().hex[:8]
        conversation = client.conversations.create()

        submitted = client.responses.create(
            model="job", input=tag, background=True, conversation=conversation.id
        )
        wait_until(
            lambda: bool(stack.sql(WAITING_ON_HOLD)),
            120,
            "the worker to store the run's end",
        )
        in_window = client.conversations.items.list(conversation.id, order="asc")
        status_in_window = client.responses.retrieve(submitted.id).status
        lost_worker.kill()
        lost_worker.wait(timeout=30)
        # The dead worker's statement must not complete once the lock goes.
        stack.sql(f"SELECT pg_terminate_backend(pid) FROM ({WAITING_ON_HOLD}) w")
        stack.sql(RELEASE_COMPLETED_SNAPSHOTS)
        holder.close()
        stack.start_worker()
        final = stack.wait_status(submitted.id, {"completed", "failed"}, timeout=120)
        items = client.conversations.items.list(conversation.id, order="asc")
    finally:
        holder.close()
        stack.sql(RELEASE_COMPLETED_SNAPSHOTS)
        stack.stop()

    # The window was hit: the first attempt's turn was in, its end was not.
    assert [item.type for item in in_window.data] == ["message", "message"]
    assert status_in_window != "completed"
    assert final.status == "completed"
    kept = [item.model_dump() for item in items.data]
    assert [item["role"] for item in kept] == ["user", "assistant"]
    assert kept[0]["content"][0]["text"] == tag
    # The turn is the re-run's: the same answer items as the final snapshot.
    (answer,) = final.output
    assert kept[1]["id"] == answer.id
    assert kept[1]["content"][0]["text"] == f"Finished {tag}."
    assert in_window.data[1].id != answer.id
