"""Resuming a pause presented as MCP approvals (``interrupt_protocol=
"mcp_approval"``).

The client answers each ``mcp_approval_request`` with an
``mcp_approval_response`` item and the paused Response's id as
``previous_response_id``. An approval resumes the interrupt with its own
value (``interrupt()`` returns the payload it presented). A rejection
(``approve: false``) of any pending interrupt does not run the graph again:
the run ends, its checkpoint is deleted, and the Response fails with
``code: "interrupt_rejected"`` and the client's reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.graph.interrupts import RESUME_WITH_VALUE
from langgraph_openai_serve.openai.responses import schemas
from langgraph_openai_serve.openai.responses.interrupt_ids import (
    interrupt_id_from_approval_id,
)
from langgraph_openai_serve.openai.responses.items import ResponseShell

REJECTED_CODE = "interrupt_rejected"


@dataclass(frozen=True, slots=True)
class Rejected:
    """The answer of an interrupt the client rejected."""

    reason: str | None


class InterruptRejected(Exception):
    """The request rejected pending interrupts; the run has been ended."""

    def __init__(self, reason: str | None, shell: ResponseShell) -> None:
        super().__init__(reason or "The client rejected the pending interrupt.")
        self.reason = reason
        self.shell = shell


def decode_approvals(body: schemas.ResponseCreateRequest) -> dict[str, Any]:
    """Answers by native interrupt id: ``RESUME_WITH_VALUE`` for an approval,
    ``Rejected`` for a rejection.

    Raises:
        InvalidRequestError: other items, or ids that are not LGOS approval
            request ids or repeat.
    """
    items = body.input if isinstance(body.input, list) else None
    if not items:
        raise InvalidRequestError(
            "A resume sends the mcp_approval_response items answering the pause.",
            param="input",
        )
    answers: dict[str, Any] = {}
    for index, item in enumerate(items):
        if not isinstance(item, schemas.McpApprovalResponse):
            raise InvalidRequestError(
                "This model presents interrupts as MCP approvals; a resume may "
                "only contain mcp_approval_response items.",
                param=f"input[{index}]",
            )
        interrupt_id = interrupt_id_from_approval_id(item.approval_request_id)
        if interrupt_id is None or interrupt_id in answers:
            raise InvalidRequestError(
                f"'{item.approval_request_id}' is not an unanswered approval "
                "request id of this run.",
                param=f"input[{index}].approval_request_id",
            )
        answers[interrupt_id] = (
            RESUME_WITH_VALUE if item.approve else Rejected(item.reason)
        )
    return answers


def rejected_ids(answers: Mapping[str, Any] | None) -> tuple[set[str], str | None]:
    """The rejected interrupt ids and the first rejection's reason."""
    rejected = {
        key: answer
        for key, answer in (answers or {}).items()
        if isinstance(answer, Rejected)
    }
    reason = next((r.reason for r in rejected.values() if r.reason), None)
    return set(rejected), reason


def rejected_body(rejection: InterruptRejected) -> dict[str, Any]:
    """The failed Response a rejection returns."""
    error = {"code": REJECTED_CODE, "message": str(rejection)}
    return rejection.shell.body("failed", [], error=error)
