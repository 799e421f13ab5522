"""The reference's Chat Completions builders, helpers and dependencies.

Public, for code written against the LGOS reference and for host apps that
build Chat Completions output themselves. Everything here is the
``/chat/completions`` route's own decoder and encoder behind the reference's
names; results are the official ``openai`` SDK types.
"""

from langgraph_openai_serve.chat_completions.builders import (
    ChatCompletionStreamResponseBuilder,
    annotations_from_message,
    chat_completion_response,
    response_message,
    tool_calls_from_message,
    usage_info,
)
from langgraph_openai_serve.chat_completions.requests import (
    ChatCompletionRequest,
    ChatCompletionRequestMessage,
    convert_to_lc_messages,
    decode_chat_request,
)
from langgraph_openai_serve.chat_completions.service import (
    GraphRun,
    StreamOwner,
    checkpoint_scope_dependency,
    create_chat_completion,
    generate_completion,
    graph_registry_dependency,
    prepare_run,
    stream_completion,
    stream_owner_dependency,
)

__all__ = [
    "ChatCompletionRequest",
    "ChatCompletionRequestMessage",
    "ChatCompletionStreamResponseBuilder",
    "GraphRun",
    "StreamOwner",
    "annotations_from_message",
    "chat_completion_response",
    "checkpoint_scope_dependency",
    "convert_to_lc_messages",
    "create_chat_completion",
    "decode_chat_request",
    "generate_completion",
    "graph_registry_dependency",
    "prepare_run",
    "response_message",
    "stream_completion",
    "stream_owner_dependency",
    "tool_calls_from_message",
    "usage_info",
]
