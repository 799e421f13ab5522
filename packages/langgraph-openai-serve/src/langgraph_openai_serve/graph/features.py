"""Optional capabilities a graph declares and model discovery advertises."""

from __future__ import annotations

from enum import StrEnum


class GraphFeature(StrEnum):
    """A capability enabled per graph through ``GraphConfig.features``."""

    CLIENT_EVENTS = "client_events"
    """The graph publishes ``status_event()`` updates (Responses commentary)."""

    FILE_INPUTS = "file_inputs"
    """The graph resolves native ``file_id`` content parts."""

    INTERRUPTS = "interrupts"
    """The graph pauses on ``interrupt()``; resumed through Responses only."""

    BACKGROUND = "background"
    """The graph accepts ``background=true`` Responses."""

    STRUCTURED_OUTPUT = "structured_output"
    """The graph answers in a JSON schema the request gives (Responses
    ``text.format``, Chat ``response_format``); LGOS checks the answer."""
