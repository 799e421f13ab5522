"""Checkpoint keys: the LangGraph ``thread_id`` of one interrupt run.

A key is ``lgos-`` followed by 64 lowercase hex digits: the SHA-256 of the
server-trusted scope, the registered model and the run UUID. Each text part is
length-prefixed before hashing, so no two different triples share a key
(``("a", "bc")`` and ``("ab", "c")`` differ), and a caller who controls the
run UUID cannot reach a run in another scope or model. The fixed prefix lets
``delete_expired_interrupt_runs`` tell LGOS threads from any other thread in
the same checkpointer.
"""

from __future__ import annotations

import hashlib
import re
import uuid

from langgraph_openai_serve.graph.errors import GraphConfigurationError

CHECKPOINT_KEY_PREFIX = "lgos-"
"""The prefix of every LGOS checkpoint key (``thread_id``)."""

_DOMAIN = b"lgos.checkpoint-key.v1\x00"
_KEY_PATTERN = re.compile(re.escape(CHECKPOINT_KEY_PREFIX) + "[0-9a-f]{64}")


def _part(value: str) -> bytes:
    data = value.encode("utf-8")
    return len(data).to_bytes(8, "big") + data


def checkpoint_key(scope: str, model: str, run_id: uuid.UUID) -> str:
    """The checkpoint ``thread_id`` of one interrupt run.

    Args:
        scope: the server-trusted checkpoint scope (tenant or principal);
            never caller-controlled metadata.
        model: the registered model id of the graph.
        run_id: the run's UUID.

    Raises:
        GraphConfigurationError: the scope is not a non-empty string (the
            scope resolver is misconfigured).
        ValueError: the model is empty.
        TypeError: ``run_id`` is not a ``uuid.UUID``.
    """
    if not isinstance(scope, str) or not scope:
        raise GraphConfigurationError(
            f"The checkpoint scope must be a non-empty string, not {scope!r}."
        )
    if not isinstance(model, str) or not model:
        raise ValueError("The model of a checkpoint key must be a non-empty string.")
    if not isinstance(run_id, uuid.UUID):
        raise TypeError(f"run_id must be a uuid.UUID, not {type(run_id).__name__}")
    digest = hashlib.sha256(_DOMAIN + _part(scope) + _part(model) + run_id.bytes)
    return CHECKPOINT_KEY_PREFIX + digest.hexdigest()


def is_checkpoint_key(thread_id: str) -> bool:
    """Whether ``thread_id`` has the shape of an LGOS checkpoint key."""
    return _KEY_PATTERN.fullmatch(thread_id) is not None
