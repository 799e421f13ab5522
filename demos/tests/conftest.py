"""The demo stack as real processes, once per session.

``python -m lgos_stack`` (what ``just up`` runs) starts the offline demo
model, the search service, SeaweedFS, the Files API, PostgreSQL, a one-shot
table setup, the background worker and the demo API on free loopback ports
in a temp folder. Tests reach them over HTTP with the official ``openai``
SDK. At the end the supervisor gets SIGINT and must have stopped
every child (checked by PID).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import httpx
import pytest
from lgos_demos.settings import DEFAULT_FILES_API_KEY
from lgos_testkit import STARTUP_SECONDS, pid_alive
from lgos_testkit.stack import (
    RunningStack,
    postgres_dir,
    stack_env,
    start_stack,
    stop_stack,
)
from openai import OpenAI


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    postgres = postgres_dir()
    try:
        # LiteLLM (and with it the model sync and the UIs) is left out: these
        # tests need only the demo services.
        running = start_stack(
            tmp_path_factory.mktemp("stack"),
            env=stack_env(),
            postgres=postgres,
            without=("litellm",),
            timeout=STARTUP_SECONDS,
        )
        yield running
        stopped = stop_stack(running.process, running.pids)
    finally:
        shutil.rmtree(postgres, ignore_errors=True)
    left = [name for name, pid in running.pids.items() if pid_alive(pid)]
    assert stopped, f"the supervisor ignored SIGINT:\n{running.output.read_text()}"
    assert not left, f"still running after the stack stopped: {left}"


@pytest.fixture(scope="session")
def api(stack: RunningStack) -> Iterator[OpenAI]:
    """The official SDK against the demo API."""
    with OpenAI(
        base_url=stack.api_url, api_key="unused", max_retries=0, timeout=30
    ) as client:
        yield client


@pytest.fixture(scope="session")
def files(stack: RunningStack) -> Iterator[OpenAI]:
    """The official SDK against the Files API, with the key the graphs use."""
    with OpenAI(
        base_url=stack.files_url,
        api_key=DEFAULT_FILES_API_KEY,
        max_retries=0,
        timeout=30,
    ) as client:
        yield client


@pytest.fixture(scope="session")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client
