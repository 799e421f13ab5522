"""The answer of an admitted run releases its admission once it is sent."""

from __future__ import annotations

from starlette.responses import Response

from langgraph_openai_serve.openai.sse import EventStreamResponse
from langgraph_openai_serve.operations.admission import Admitted


def released_with(answer: Response, admitted: Admitted | None) -> Response:
    """``answer``, releasing ``admitted`` (``None``: nothing to release) when
    its run is over: a stream's when the stream ends, any other's now (its
    body is complete)."""
    if admitted is None:
        return answer
    if isinstance(answer, EventStreamResponse):
        answer.active = admitted.counting(answer.active)
    else:
        admitted.release()
    return answer
