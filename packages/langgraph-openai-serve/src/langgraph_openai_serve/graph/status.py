"""Client events: the versioned envelope graphs write to LangGraph's stream.

Graph code calls ``status_event()`` (or the lower-level ``client_event()``)
and passes the result to ``get_stream_writer()``. The runner recognises the
envelope; Responses streams show visible statuses as commentary messages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

CLIENT_EVENT_TYPE = "lgos.client_event"
CLIENT_EVENT_SCHEMA_VERSION = 1

ClientEventType: TypeAlias = Literal["status", "progress", "artifact"]
_EVENT_TYPES = frozenset({"status", "progress", "artifact"})


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """A status a graph published; ``hidden`` ones are not shown to users."""

    description: str
    done: bool = False
    hidden: bool = False
    namespace: tuple[str, ...] = ()


def client_event(
    event_type: ClientEventType,
    data: Any,
    *,
    namespace: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Build a public, JSON-safe client event envelope.

    Raises:
        ValueError: unknown event type, a non-string namespace segment, or data
            that JSON cannot represent.
    """
    if event_type not in _EVENT_TYPES:
        raise ValueError(f"client event type must be one of {sorted(_EVENT_TYPES)}")
    if not all(isinstance(segment, str) for segment in namespace):
        raise ValueError("every namespace segment must be a string")
    try:
        safe = json.loads(json.dumps(data, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"client event data must be JSON-safe: {exc}") from exc
    return {
        "type": CLIENT_EVENT_TYPE,
        "schema_version": CLIENT_EVENT_SCHEMA_VERSION,
        "event": {"type": event_type, "namespace": list(namespace), "data": safe},
    }


def status_event(
    description: str,
    *,
    done: bool = False,
    hidden: bool = False,
    namespace: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A user-facing status update, e.g. ``"Searching the web"``."""
    if not isinstance(description, str):
        raise ValueError("a status description must be a string")
    data = {"description": description, "done": bool(done), "hidden": bool(hidden)}
    return client_event("status", data, namespace=namespace)


def read_status(payload: Any) -> StatusUpdate | None:
    """The status in a custom stream payload, or ``None`` for anything else."""
    if (
        not isinstance(payload, dict)
        or payload.get("type") != CLIENT_EVENT_TYPE
        or payload.get("schema_version") != CLIENT_EVENT_SCHEMA_VERSION
    ):
        return None
    event = payload.get("event")
    if not isinstance(event, dict) or event.get("type") != "status":
        return None
    data = event.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("description"), str):
        return None
    return StatusUpdate(
        description=data["description"],
        done=bool(data.get("done", False)),
        hidden=bool(data.get("hidden", False)),
        namespace=tuple(event.get("namespace") or ()),
    )
