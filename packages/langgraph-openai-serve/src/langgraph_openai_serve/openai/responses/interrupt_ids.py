"""How an interrupt run is named on the Responses wire.

A paused run's Response id is ``resp_lg_<run uuid hex>_<scope tag><nonce>``:
it embeds the run UUID (the rest of the checkpoint key comes from the
server-trusted scope and the model), a 16-hex tag of the scope so a request
from another scope is told "not found" rather than "conflict", and a nonce so
every pause has its own id. Each pending interrupt is answered through a call
id ``call_lg_<native interrupt id>`` or, presented as an MCP approval, an
approval request id ``mcpr_lg_<native interrupt id>``.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import uuid
from collections.abc import Mapping

from langgraph_openai_serve.graph.errors import (
    InvalidRequestError,
    PausedRunNotFoundError,
)

RUN_ID_METADATA_KEY = "lgos_run_id"

_RESPONSE_ID = re.compile(r"resp_lg_([0-9a-f]{32})_([0-9a-f]{16})[0-9a-f]{16}")
_CALL_PREFIX = "call_lg_"
_APPROVAL_PREFIX = "mcpr_lg_"


def _scope_tag(scope: str, model: str) -> str:
    digest = hashlib.sha256(b"lgos.response-scope.v1\x00")
    for part in (scope, model):
        data = part.encode()
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()[:16]


def paused_response_id(scope: str, model: str, run_id: uuid.UUID) -> str:
    """A fresh Response id for a response of interrupt run ``run_id``."""
    return f"resp_lg_{run_id.hex}_{_scope_tag(scope, model)}{secrets.token_hex(8)}"


def run_id_from_response_id(response_id: str, scope: str, model: str) -> uuid.UUID:
    """The run a ``previous_response_id`` names, checked against the scope.

    Raises:
        InvalidRequestError: not an LGOS paused-response id.
        PausedRunNotFoundError: it belongs to another scope or model.
    """
    match = _RESPONSE_ID.fullmatch(response_id)
    if match is None:
        raise InvalidRequestError(
            "previous_response_id is not the id of a paused LGOS response.",
            param="previous_response_id",
        )
    if match.group(2) != _scope_tag(scope, model):
        raise PausedRunNotFoundError(response_id)
    return uuid.UUID(hex=match.group(1))


def run_id_from_metadata(metadata: Mapping[str, str]) -> uuid.UUID:
    """``metadata.lgos_run_id`` (retry-safe initial requests) or a new UUID."""
    value = metadata.get(RUN_ID_METADATA_KEY)
    if value is None:
        return uuid.uuid4()
    try:
        run_id = uuid.UUID(value)
    except ValueError:
        run_id = uuid.UUID(int=0)
    if run_id.int == 0:
        raise InvalidRequestError(
            "metadata.lgos_run_id must be a non-nil UUID.",
            param=f"metadata.{RUN_ID_METADATA_KEY}",
        )
    return run_id


def call_id_for(interrupt_id: str) -> str:
    """The call id that presents one native LangGraph interrupt id."""
    return _CALL_PREFIX + interrupt_id


def interrupt_id_from_call_id(call_id: str) -> str | None:
    """The native interrupt id a ``call_lg_`` call id carries, or ``None``."""
    if call_id.startswith(_CALL_PREFIX) and len(call_id) > len(_CALL_PREFIX):
        return call_id[len(_CALL_PREFIX) :]
    return None


def approval_request_id(interrupt_id: str) -> str:
    """The ``mcp_approval_request`` id that presents one native interrupt."""
    return _APPROVAL_PREFIX + interrupt_id


def interrupt_id_from_approval_id(approval_id: str) -> str | None:
    """The native interrupt id an ``mcpr_lg_`` id carries, or ``None``."""
    if approval_id.startswith(_APPROVAL_PREFIX) and len(approval_id) > len(
        _APPROVAL_PREFIX
    ):
        return approval_id[len(_APPROVAL_PREFIX) :]
    return None
