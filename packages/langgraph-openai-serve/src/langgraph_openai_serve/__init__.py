"""LangGraph OpenAI Serve: put LangGraph graphs behind the OpenAI API."""

from langgraph_openai_serve.api_keys import ApiKeys
from langgraph_openai_serve.graph.citations import Citation, citation_slice
from langgraph_openai_serve.graph.client_settings import ClientSettings
from langgraph_openai_serve.graph.config import GraphConfig
from langgraph_openai_serve.graph.coordination import (
    InMemoryRunCoordinator,
    RunCoordinator,
)
from langgraph_openai_serve.graph.errors import (
    GraphConfigurationError,
    GraphError,
    GraphNotFoundError,
    InterruptStateConflictError,
    InvalidRequestError,
    LGOSError,
    PausedRunNotFoundError,
    RunBusyError,
)
from langgraph_openai_serve.graph.expiry import delete_expired_interrupt_runs
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.generation import (
    GenerationControl,
    GenerationOptions,
    OutputSchema,
    StructuredOutputError,
)
from langgraph_openai_serve.graph.registry import GraphRegistry
from langgraph_openai_serve.graph.request import (
    ClientFunctionTool,
    GraphRequest,
    NamedFunctionToolChoice,
)
from langgraph_openai_serve.graph.status import client_event, status_event
from langgraph_openai_serve.openai.auth import request_principal
from langgraph_openai_serve.server import LanggraphOpenaiServe
from langgraph_openai_serve.settings import Settings

__all__ = [
    "ApiKeys",
    "Citation",
    "ClientFunctionTool",
    "ClientSettings",
    "GenerationControl",
    "GenerationOptions",
    "GraphConfig",
    "GraphConfigurationError",
    "GraphError",
    "GraphFeature",
    "GraphNotFoundError",
    "GraphRegistry",
    "GraphRequest",
    "InMemoryRunCoordinator",
    "InterruptStateConflictError",
    "InvalidRequestError",
    "LGOSError",
    "LanggraphOpenaiServe",
    "NamedFunctionToolChoice",
    "OutputSchema",
    "PausedRunNotFoundError",
    "RunBusyError",
    "RunCoordinator",
    "Settings",
    "StructuredOutputError",
    "citation_slice",
    "client_event",
    "delete_expired_interrupt_runs",
    "request_principal",
    "status_event",
]


def __getattr__(name: str) -> object:
    # The reference's deprecated names warn where they are looked up.
    if name == "ClientSettingsValidationError":
        from langgraph_openai_serve.deprecation import warn_renamed
        from langgraph_openai_serve.graph.client_settings import (
            _SettingsValidationError,
        )

        warn_renamed(name, "InvalidRequestError", stacklevel=3)
        return _SettingsValidationError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
