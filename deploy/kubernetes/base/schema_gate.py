"""The gate between ``lgos db-setup`` and the pods that need its schema.

    python schema_gate.py mark   the db-setup Job, after ``lgos db-setup``
    python schema_gate.py wait   the API's and workers' init container

The Job and the pods start together (``kubectl apply -k``). ``mark`` records
that the setup of this image's LGOS version ran to its end; ``wait`` polls
until the row for its own version is there. Keyed by version, the gate also
orders an upgrade: new pods wait for the new image's setup, old pods keep
running meanwhile. Connection: ``LGOS_DATABASE_URL``. ``wait`` gives up with
exit 1 after ``LGOS_SCHEMA_WAIT_TIMEOUT`` seconds (default 600), naming what
it waited for; the pod then restarts it.
"""

from __future__ import annotations

import os
import sys
import time
from importlib.metadata import version
from typing import TextIO

import psycopg

POLL_SECONDS = 2.0
MARKS_TABLE = "lgos_schema_setups"


def _say(message: str, stream: TextIO = sys.stdout) -> None:
    stream.write(f"schema-gate: {message}\n")
    stream.flush()


def lgos_version() -> str:
    """The version of the LGOS library this image carries."""
    return version("langgraph-openai-serve")


def mark(url: str, setup_version: str) -> None:
    """Record that ``lgos db-setup`` of ``setup_version`` finished."""
    with psycopg.connect(url, connect_timeout=5, autocommit=True) as conn:
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {MARKS_TABLE} ("
            " lgos_version text PRIMARY KEY,"
            " finished_at timestamptz NOT NULL DEFAULT now())"
        )
        conn.execute(
            f"INSERT INTO {MARKS_TABLE} (lgos_version) VALUES (%s)"
            " ON CONFLICT (lgos_version) DO UPDATE SET finished_at = now()",
            (setup_version,),
        )


def is_marked(url: str, setup_version: str) -> bool:
    """Whether the setup of ``setup_version`` finished."""
    with psycopg.connect(url, connect_timeout=5, autocommit=True) as conn:
        row = conn.execute("SELECT to_regclass(%s)", (MARKS_TABLE,)).fetchone()
        if row is None or row[0] is None:
            return False
        found = conn.execute(
            f"SELECT 1 FROM {MARKS_TABLE} WHERE lgos_version = %s",
            (setup_version,),
        ).fetchone()
        return found is not None


def wait(url: str, setup_version: str, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    reason = "not checked yet"
    while True:
        try:
            if is_marked(url, setup_version):
                _say(f"the schema of LGOS {setup_version} is ready")
                return 0
            reason = f"waiting for the db-setup Job of LGOS {setup_version}"
        except psycopg.Error as exc:
            reason = f"the database does not answer: {str(exc).strip()}"
        _say(reason)
        if time.monotonic() >= deadline:
            _say(f"gave up after {timeout:g} s", sys.stderr)
            return 1
        time.sleep(POLL_SECONDS)


def main(argv: list[str]) -> int:
    url = os.environ.get("LGOS_DATABASE_URL")
    if len(argv) != 1 or argv[0] not in ("mark", "wait"):
        sys.stderr.write("usage: schema_gate.py mark|wait\n")
        return 2
    if not url:
        _say("LGOS_DATABASE_URL is not set", sys.stderr)
        return 2
    if argv[0] == "mark":
        mark(url, lgos_version())
        _say(f"marked the schema of LGOS {lgos_version()} ready")
        return 0
    timeout = float(os.environ.get("LGOS_SCHEMA_WAIT_TIMEOUT", "600"))
    return wait(url, lgos_version(), timeout)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
