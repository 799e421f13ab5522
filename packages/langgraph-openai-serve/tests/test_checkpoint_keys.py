"""Checkpoint keys: fixed-length, unambiguous, scoped thread ids."""

from __future__ import annotations

import uuid

import pytest
from langgraph_openai_serve.graph.checkpoint_keys import (
    CHECKPOINT_KEY_PREFIX,
    checkpoint_key,
    is_checkpoint_key,
)
from langgraph_openai_serve.graph.errors import GraphConfigurationError

RUN = uuid.UUID("12345678-1234-5678-1234-567812345678")


@pytest.mark.parametrize(
    ("scope", "model", "run_id", "key"),
    [
        (
            "default",
            "echo",
            RUN,
            "lgos-cf7b7d0f488d0a4bf4d330d47e3f0348ca1d54f96457cd5441462a3d027a7d43",
        ),
        (
            "tenant-ä",
            "interruptible",
            uuid.UUID("00000000-0000-4000-8000-000000000001"),
            "lgos-37843c1dc3ead7353aba022e39b9a8b25f2395523e7d76ba5b02600aac38c397",
        ),
    ],
)
def test_keys_never_change(scope: str, model: str, run_id: uuid.UUID, key: str) -> None:
    """Paused runs are found by these keys: a new derivation would orphan them."""
    assert checkpoint_key(scope, model, run_id) == key


def test_key_is_prefixed_fixed_length_hex() -> None:
    for scope in ("a", "x" * 10_000):
        key = checkpoint_key(scope, "m", uuid.uuid4())
        assert key.startswith(CHECKPOINT_KEY_PREFIX)
        assert len(key) == len(CHECKPOINT_KEY_PREFIX) + 64
        assert is_checkpoint_key(key)


def test_each_part_changes_the_key() -> None:
    base = checkpoint_key("tenant", "model", RUN)
    assert checkpoint_key("tenant2", "model", RUN) != base
    assert checkpoint_key("tenant", "model2", RUN) != base
    assert checkpoint_key("tenant", "model", uuid.uuid4()) != base


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (("a", "bc"), ("ab", "c")),
        (("a\x00", "b"), ("a", "\x00b")),
        (("ab", "c"), ("a", "bc")),
    ],
)
def test_parts_cannot_run_into_each_other(
    first: tuple[str, str], second: tuple[str, str]
) -> None:
    assert checkpoint_key(*first, RUN) != checkpoint_key(*second, RUN)


@pytest.mark.parametrize("scope", ["", None, 42])
def test_scope_must_be_a_non_empty_string(scope: object) -> None:
    with pytest.raises(GraphConfigurationError, match="checkpoint scope"):
        checkpoint_key(scope, "model", RUN)  # type: ignore[arg-type]


def test_model_and_run_id_are_checked() -> None:
    with pytest.raises(ValueError, match="model"):
        checkpoint_key("scope", "", RUN)
    with pytest.raises(TypeError, match=r"uuid\.UUID"):
        checkpoint_key("scope", "model", str(RUN))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "thread_id",
    [
        "lgos-" + "0" * 63,
        "lgos-" + "0" * 65,
        "lgos-" + "A" * 64,
        "LGOS-" + "0" * 64,
        "run-" + "0" * 64,
        "lgos-" + "0" * 63 + "\n",
        "chat-123",
    ],
)
def test_other_thread_ids_are_not_checkpoint_keys(thread_id: str) -> None:
    assert not is_checkpoint_key(thread_id)
