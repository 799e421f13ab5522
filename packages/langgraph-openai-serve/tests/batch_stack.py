"""Batches on PostgreSQL with real ``lgos serve`` and ``lgos worker``
processes (``background_stack.Stack`` loading ``batch_app:registry``), the
session's Files API, and what the tests read back: which worker ran which
line (the graph's markers) and the tenant's files."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from background_stack import Stack
from batch_fixtures import FILES_KEYS
from lgos_testkit import FilesApi
from openai import OpenAI

StackFactory = Callable[..., Stack]


@pytest.fixture
def batch_stack(
    tmp_path: Any, postgres_uri: str, bytecode_cache: Any, batch_env: dict[str, str]
) -> Iterator[StackFactory]:
    """Make a stack whose processes run batches (``LGOS_*`` settings as
    keyword arguments); the processes are stopped at the end. No API keys:
    every request is the tenant ``default``."""
    made: list[Stack] = []

    def make(**env: str) -> Stack:
        files = {
            key: value for key, value in batch_env.items() if key != "LGOS_API_KEYS"
        }
        stack = Stack(
            tmp_path,
            postgres_uri,
            bytecode_cache,
            LGOS_REGISTRY="batch_app:registry",
            LGOS_WORKER_SHUTDOWN_TIMEOUT="1",
            **{**files, **env},
        )
        stack.sql("TRUNCATE lgos_batches CASCADE")
        made.append(stack)
        return stack

    try:
        yield make
    finally:
        for stack in made:
            stack.stop()


@pytest.fixture
def files(files_api: FilesApi) -> Iterator[OpenAI]:
    """The tenant ``default``'s client of the Files API."""
    key = next(k for k, owner in FILES_KEYS.items() if owner == "default")
    with OpenAI(base_url=files_api.openai_url, api_key=key, max_retries=0) as client:
        yield client


def upload_lines(files: OpenAI, texts: list[str]) -> str:
    """An input file of ``/v1/responses`` lines for the ``work`` graph, one
    per text, ``custom_id`` ``req-<i>``; its id."""
    lines = [
        {
            "custom_id": f"req-{i}",
            "method": "POST",
            "url": "/v1/responses",
            "body": {"model": "work", "input": text},
        }
        for i, text in enumerate(texts)
    ]
    upload = "".join(json.dumps(line) + "\n" for line in lines).encode()
    return files.files.create(file=("in.jsonl", upload), purpose="batch").id


def create_batch(client: OpenAI, input_file_id: str) -> Any:
    return client.batches.create(
        input_file_id=input_file_id, endpoint="/v1/responses", completion_window="24h"
    )


def pids_that_started(stack: Stack, text: str) -> set[int]:
    """The workers whose graph started on input ``text``."""
    return {
        int(path.name.rsplit("-", 2)[1])
        for path in stack.markers_of("start", text)
        if path.name.startswith(f"start-{text}-")
        and path.name.removeprefix(f"start-{text}-").count("-") == 1
    }


def lines_of(files: OpenAI, file_id: str | None) -> list[dict[str, Any]]:
    if file_id is None:
        return []
    text = files.files.content(file_id).text
    return [json.loads(line) for line in text.splitlines()]
