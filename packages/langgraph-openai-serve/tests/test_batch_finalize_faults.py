"""A worker SIGKILLed in the window between uploading a batch's output file
and keeping its id: the finalize step, run again by the next worker, must
leave the tenant exactly one output file for the batch, the one the batch
names.

The window is opened on purpose: a PostgreSQL trigger makes the statement
that keeps the output file's id wait on an advisory lock the test holds.
The file is in the Files API by then; the test kills the worker and ends
its waiting statement (as if it had never been sent).
"""

from __future__ import annotations

import psycopg
import pytest
from batch_stack import StackFactory, create_batch, lines_of, upload_lines
from lgos_testkit import wait_for_batch, wait_until
from openai import OpenAI

pytestmark = pytest.mark.timeout(600)

HOLD_KEY = 3838
"""The advisory lock the held statement waits on."""

HOLD_OUTPUT_FILE_ID = f"""
CREATE OR REPLACE FUNCTION lgos_test_hold_output_file() RETURNS trigger AS $$
BEGIN
    IF NEW.batch->>'output_file_id' IS NOT NULL
            AND OLD.batch->>'output_file_id' IS NULL THEN
        PERFORM pg_advisory_xact_lock({HOLD_KEY});
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE OR REPLACE TRIGGER lgos_test_hold_output_file
    BEFORE UPDATE ON lgos_batches
    FOR EACH ROW EXECUTE FUNCTION lgos_test_hold_output_file();
"""
RELEASE_OUTPUT_FILE_ID = """
DROP TRIGGER IF EXISTS lgos_test_hold_output_file ON lgos_batches;
DROP FUNCTION IF EXISTS lgos_test_hold_output_file();
"""
WAITING_ON_HOLD = (
    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' "
    f"AND classid = 0 AND objid = {HOLD_KEY} AND NOT granted"
)


def _named(files: OpenAI, filename: str) -> list[str]:
    """The tenant's ``batch_output`` files called ``filename``."""
    return [
        stored.id
        for stored in files.files.list(purpose="batch_output")
        if stored.filename == filename
    ]


def test_a_worker_killed_after_uploading_leaves_one_output_file(
    batch_stack: StackFactory, files: OpenAI, postgres_uri: str
) -> None:
    stack = batch_stack()
    holder = psycopg.connect(postgres_uri, autocommit=True)
    try:
        stack.sql(HOLD_OUTPUT_FILE_ID)
        holder.execute("SELECT pg_advisory_lock(%s)", (HOLD_KEY,))
        input_file = upload_lines(files, ["one", "two", "three"])
        stack.start_api()
        lost = stack.start_worker()
        client = stack.client()
        batch = create_batch(client, input_file)
        wait_until(
            lambda: bool(stack.sql(WAITING_ON_HOLD)),
            120,
            "the worker to keep the output file's id",
        )
        name = f"{batch.id}_batch_output.jsonl"
        uploaded = _named(files, name)
        lost.kill()
        lost.wait(timeout=30)
        # The dead worker's statement must not complete once the lock goes.
        stack.sql(f"SELECT pg_terminate_backend(pid) FROM ({WAITING_ON_HOLD}) w")
        stack.sql(RELEASE_OUTPUT_FILE_ID)
        holder.close()
        in_window = client.batches.retrieve(batch.id)
        stack.start_worker()
        done = wait_for_batch(client, batch.id)
        kept = _named(files, name)
    finally:
        holder.close()
        stack.sql(RELEASE_OUTPUT_FILE_ID)

    # The window was hit: the file was uploaded, the batch did not name it.
    assert len(uploaded) == 1
    assert in_window.status == "finalizing"
    assert in_window.output_file_id is None
    assert done.status == "completed", done.errors
    assert kept == [done.output_file_id] == uploaded
    output = lines_of(files, done.output_file_id)
    assert [line["custom_id"] for line in output] == ["req-0", "req-1", "req-2"]
