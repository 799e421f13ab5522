"""Opening one Responses run: decode, lease (interrupt graphs), prepare.

The foreground route and the background executor open runs the same way, so
a background Response produces the same output as the foreground run.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_openai_serve.graph.config import GraphConfig
from langgraph_openai_serve.graph.errors import InvalidRequestError, RunBusyError
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.interrupts import reject_interrupts
from langgraph_openai_serve.graph.request import GraphRequest
from langgraph_openai_serve.graph.runner import PreparedRun, prepare_run
from langgraph_openai_serve.openai.responses.approvals import (
    InterruptRejected,
    decode_approvals,
    rejected_ids,
)
from langgraph_openai_serve.openai.responses.decode import (
    decode_response_request,
    decode_resume,
    graph_request_of,
)
from langgraph_openai_serve.openai.responses.generation import responses_generation
from langgraph_openai_serve.openai.responses.interrupt_runs import (
    InterruptRun,
    open_interrupt_run,
)
from langgraph_openai_serve.openai.responses.items import ResponseShell
from langgraph_openai_serve.openai.responses.pause import APPROVAL_SERVER_LABEL
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.openai.state import ServeState
from langgraph_openai_serve.responses.protocol import ResponseStore


@dataclass(frozen=True, slots=True)
class OpenRun:
    run: PreparedRun
    shell: ResponseShell
    lease: InterruptRun | None
    """Held for interrupt graphs; the caller releases it when the run ends."""


def decode(
    body: ResponseCreateRequest, config: GraphConfig, scope: str | None = None
) -> tuple[GraphRequest, list[BaseMessage], dict[str, Any] | None]:
    """Validate and normalize a request: (request, messages, resume answers),
    the request for the tenant ``scope``."""
    server_tools = frozenset(config.server_tools)
    generation = responses_generation(body, config)
    approvals = config.interrupt_protocol == "mcp_approval"
    label = APPROVAL_SERVER_LABEL if approvals else None
    if body.previous_response_id is not None and approvals:
        answers = decode_approvals(body)
        if body.background and rejected_ids(answers)[0]:
            raise InvalidRequestError(
                "A rejection ends the paused run at once; send it without background.",
                param="background",
            )
        if body.instructions is not None:
            raise InvalidRequestError(
                "A resume continues the paused run; new instructions are not allowed.",
                param="instructions",
            )
        request = graph_request_of(body, server_tools, label, generation, scope)
        return request, [], answers
    if body.previous_response_id is not None:
        request, outputs = decode_resume(
            body, server_tools=server_tools, generation=generation, scope=scope
        )
        return request, [], dict(outputs)
    request, messages = decode_response_request(
        body,
        file_inputs=config.supports(GraphFeature.FILE_INPUTS),
        server_tools=server_tools,
        approval_label=label,
        generation=generation,
        scope=scope,
    )
    return request, messages, None


async def open_run(
    state: ServeState,
    config: GraphConfig,
    body: ResponseCreateRequest,
    *,
    scope: str,
    request_id: str | None = None,
    response_id: str | None = None,
    run_id: uuid.UUID | None = None,
    durable_thread: str | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    kept: bool = False,
    continues: str | None = None,
    callbacks: tuple[BaseCallbackHandler, ...] = (),
    background: ResponseStore | None = None,
) -> OpenRun:
    """Decode, take an interrupt run's lease, and prepare the graph run.

    Raises whatever decoding, leasing or the adapters raise; a lease taken
    here is released again before the error propagates. A resume rejecting
    MCP approvals ends the run here and raises ``InterruptRejected``.
    ``durable_thread`` and ``checkpointer``: see ``prepare_run``. ``kept``:
    the deployment keeps this Response; ``continues``: the kept Response
    ``body`` continues (``chain.py``), shown as its ``previous_response_id``;
    ``callbacks``: the run's own handlers beside the server's (its spans).
    ``background``: the store of background Responses, for a foreground
    run: an interrupt run a queued or running background Response of the
    scope drives is busy (``RunBusyError``), checked under the lease (a
    background submit stores its Response under the same lease), so a
    foreground resume never takes a pause from an accepted background one.
    """
    graph_request, messages, answers = decode(body, config, scope)
    lease = None
    if config.supports(GraphFeature.INTERRUPTS):
        lease = await open_interrupt_run(
            config, scope, graph_request, body.previous_response_id, run_id
        )
    rejected, reason = rejected_ids(answers)
    try:
        if (
            lease is not None
            and background is not None
            and await background.drives(scope, lease.run_id.hex)
        ):
            raise RunBusyError(lease.thread_id)
        if lease is not None and rejected:
            graph = await config.resolve_graph()
            await reject_interrupts(graph, lease.thread_id, rejected)
            shell = ResponseShell.for_request(
                body, response_id=lease.response_id, store=kept
            )
            raise InterruptRejected(reason, shell)
        run = await prepare_run(
            config,
            graph_request,
            messages,
            callbacks=state.callbacks() + callbacks,
            request_id=request_id,
            interrupt_thread=lease.thread_id if lease else None,
            answers=answers,
            durable_thread=durable_thread,
            checkpointer=checkpointer,
            scope=scope,
        )
    except BaseException:
        if lease is not None:
            await lease.release()
        raise
    shell = ResponseShell.for_request(
        body,
        response_id=response_id or (lease.response_id if lease else None),
        background=bool(body.background),
        store=kept,
        previous_response_id=continues,
    )
    return OpenRun(run, shell, lease)
