"""
title: LGOS Responses
author: LGOS
description: LGOS graphs via LiteLLM's Responses API: status, sources, questions, files
version: 0.1.0
license: MIT
"""

# An Open WebUI Function (a "manifold" pipe) kept in the LGOS repository and
# installed by `lgos-open-webui-sync`. Open WebUI loads it from one string of
# source, so it is one file and imports only what Open WebUI's environment
# has (httpx, pydantic): never an LGOS package. It is long for a module; its
# sections each do one job and are listed here:
#
#   wire       the Responses SSE stream (a request's, or a background run's
#              followed through the gateway's follow route) and the Files
#              API over httpx
#   catalog    LiteLLM's /model/info: which graphs exist, what each supports
#   history    Open WebUI's chat messages -> Responses input items, and the
#              paused-interrupt record kept in the assistant message
#   mapping    pure functions: stream events -> UI actions (status events,
#              source events, answer text), interrupts -> dialogs and answers,
#              display_file -> what the chat shows, settings -> metadata
#   Pipe       the Function: Valves, UserValves, pipes() and pipe()
#
# Everything in "mapping" is plain functions over parsed JSON, so tests feed
# real LGOS streams through them without Open WebUI.

import asyncio
import base64
import binascii
import json
import logging
import mimetypes
import re
import time
from collections import OrderedDict
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Mapping,
    Sequence,
)
from contextlib import AbstractAsyncContextManager, aclosing
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import BaseModel, Field

log = logging.getLogger(__name__)

Json = dict[str, Any]
Emitter = Callable[[Json], Awaitable[Any]]

INTERRUPT_TOOL = "lgos_interrupt"
APPROVAL_REQUEST = "mcp_approval_request"
APPROVAL_CHOICES = ("approve", "reject")
DISPLAY_FILE = "display_file"
FILE_INPUTS = "file_inputs"
SETTINGS_KEY = "lgos_settings"
CONVERSATION_KEY = "conversation_id"
METADATA_VALUE_LIMIT = 512
MAX_CLIENT_ROUNDS = 4
TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
BACKGROUND = "background"
FOLLOW_PATH = "/lgos/v1"
"""The stack's LiteLLM pass-through to LGOS's Responses API: LiteLLM's own
``/v1`` cannot stream a retrieved Response, so background runs are followed
there, by LGOS's id."""
TERMINAL_STATUSES = frozenset({"completed", "incomplete", "failed", "cancelled"})
REATTACH_LIMIT = 5
"""Reconnections in a row without a new event before a follow gives up."""
BACKGROUND_ENDINGS = {
    "completed": "Background run finished",
    "incomplete": "Background run ended early",
    "failed": "Background run failed",
    "cancelled": "Background run cancelled",
}
PENDING_LABEL = "lgos-interrupt"
RESUMED_LABEL = "lgos-resumed"
RESPONSE_LABEL = "lgos-response"
"""Marks the Response a whole turn ended with, on a deployment that keeps
Responses: the next turn names it instead of replaying the history."""
WAITING = "Waiting for your answer: reply to this message to continue."
# Markdown link reference definitions: kept in the message text (so the pause
# survives reloads and restarts) but never rendered.
_MARKER = re.compile(
    r'^\[(lgos-interrupt|lgos-resumed|lgos-response)\]: # "([A-Za-z0-9_=-]*)"\s*$'
)

DISPLAY_FILE_TOOL: Json = {
    "type": "function",
    "name": DISPLAY_FILE,
    "description": (
        "Show the user a file stored in the Files API (an image inline, a "
        "text file as a block). Call it after uploading the file."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "file_id": {"type": "string", "description": "The Files API file id."},
            "filename": {"type": "string", "description": "The name to show."},
            "title": {"type": "string", "description": "A short caption."},
        },
        "required": ["file_id", "filename", "title"],
        "additionalProperties": False,
    },
    "strict": True,
}


class LgosError(Exception):
    """Something the user should read instead of an answer."""


# ------------------------------------------------------------------ wire


def api_root(url: str) -> str:
    """``http://host:4000`` from ``http://host:4000``, ``.../v1`` or ``.../v1/``."""
    return url.strip().rstrip("/").removesuffix("/v1")


_LITELLM_ID_MARK = "litellm:custom_llm_provider:"


def upstream_response_id(response_id: str) -> str:
    """LGOS's id inside a LiteLLM Response id: ``resp_`` + base64 of
    ``litellm:custom_llm_provider:..;model_id:..;response_id:<LGOS id>``;
    any other id as it is. (This file is installed on its own, so it keeps
    its own copy of lgos_chainlit.gateway_ids; a test holds them equal.)"""
    if not response_id.startswith("resp_"):
        return response_id
    try:
        text = base64.b64decode(response_id[5:], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return response_id
    if not text.startswith(_LITELLM_ID_MARK):
        return response_id
    _, found, upstream = text.partition(";response_id:")
    return upstream if found and upstream else response_id


_INNER_ERROR = re.compile(r'\{"error":\s*\{.*\}\s*\}')


def _error_message(status: int, body: bytes) -> tuple[str | None, str]:
    """The ``(code, message)`` of an error answer.

    LiteLLM wraps the backend's OpenAI error envelope as text inside its own
    message (keeping the HTTP status): the inner envelope wins when present.
    Behind the stack's error callback the message is LGOS's own and LGOS's
    code is in ``provider_specific_fields.error.code`` (``code`` is the
    status there).
    """
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        error = None
    if not isinstance(error, dict):
        return None, body.decode(errors="replace")[:300] or f"HTTP {status}"
    message = str(error.get("message") or "")
    inner = _INNER_ERROR.search(message)
    if inner is not None:
        try:
            nested = json.loads(inner.group(0))["error"]
            return _error_message(status, json.dumps({"error": nested}).encode())
        except (ValueError, KeyError, TypeError):
            pass
    code = error.get("code")
    specific = error.get("provider_specific_fields")
    backend = specific.get("error") if isinstance(specific, dict) else None
    if isinstance(backend, dict) and "code" in backend:
        code = backend["code"]
    return (str(code) if code else None), message


class GatewayError(LgosError):
    def __init__(self, status: int, code: str | None, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.code = code


async def sse_events(lines: AsyncIterator[str]) -> AsyncGenerator[Json, None]:
    """The JSON ``data:`` payloads of a server-sent event stream."""
    data: list[str] = []
    async for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif not line.strip() and data:
            payload = "\n".join(data)
            data = []
            if payload != "[DONE]":
                yield json.loads(payload)
    if data and "\n".join(data) != "[DONE]":
        yield json.loads("\n".join(data))


END_USER_HEADER = "x-lgos-end-user"
"""Names the signed-in user a request is for: LiteLLM forwards it to LGOS,
whose gateway key acts for that user, and the Files API's gateway key acts
for the same user (owner ``<gateway>.<user>``)."""


def credentials(key: str, end_user: str | None = None) -> dict[str, str]:
    """The headers of a request with ``key`` for ``end_user``."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    if end_user:
        headers[END_USER_HEADER] = end_user
    return headers


async def stream_response(
    http: httpx.AsyncClient, gateway_url: str, headers: Mapping[str, str], body: Json
) -> AsyncGenerator[Json, None]:
    """``POST /v1/responses`` with ``stream=true``: the parsed events."""
    url = api_root(gateway_url) + "/v1/responses"
    request = http.stream("POST", url, json={**body, "stream": True}, headers=headers)
    async with aclosing(_streamed_events(request)) as events:
        async for event in events:
            yield event


async def follow_response(
    http: httpx.AsyncClient,
    follow_url: str,
    headers: Mapping[str, str],
    run_id: str,
    after: int,
) -> AsyncGenerator[Json, None]:
    """A background run's events after sequence number ``after``:
    ``GET {follow}/responses/{id}?stream=true&starting_after=N`` (the
    gateway's follow route: LGOS's own stream, by LGOS's id)."""
    url = f"{follow_url}/responses/{run_id}"
    params = {"stream": "true", "starting_after": str(after)}
    request = http.stream("GET", url, params=params, headers=headers)
    async with aclosing(_streamed_events(request)) as events:
        async for event in events:
            yield event


async def _streamed_events(
    request: AbstractAsyncContextManager[httpx.Response],
) -> AsyncGenerator[Json, None]:
    """The events of one event-stream request; an error status is a
    ``GatewayError``. The body is closed here, in the task reading it, on
    every exit: the end, an error, or the consumer closing this generator."""
    async with request as response:
        if response.status_code != 200:
            code, message = _error_message(response.status_code, await response.aread())
            raise GatewayError(response.status_code, code, message)
        lines = response.aiter_lines()
        try:
            async with aclosing(sse_events(lines)) as events:
                async for event in events:
                    yield event
        finally:
            try:
                await response.aclose()
            finally:
                await _run_out(lines)


async def gateway_json(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: Json | None = None,
) -> Json:
    """A JSON request to the gateway; an error status is a ``GatewayError``."""
    try:
        response = await http.request(method, url, json=body, headers=headers)
    except httpx.HTTPError as exc:
        raise LgosError(f"{method} {url} failed: {exc}") from exc
    if response.status_code != 200:
        code, message = _error_message(response.status_code, response.content)
        raise GatewayError(response.status_code, code, message)
    answer = response.json()
    return answer if isinstance(answer, dict) else {}


async def _run_out(body: AsyncIterator[Any]) -> None:
    """Finish httpx's body reader (a chain of async generators) once its
    response is closed, in the task that read it: left suspended, the garbage
    collector would close it later from elsewhere, or after the event loop
    closed. (This file is installed into Open WebUI on its own, so it keeps
    its own copy of what lgos_chainlit.closing does.)"""
    while True:
        try:
            await anext(body)
        except Exception:
            return


class UploadCache:
    """Files API ids of attachments already uploaded, per user, Files API
    and Open WebUI file; the oldest entries go past ``limit``."""

    def __init__(self, limit: int = 4096) -> None:
        self._ids: OrderedDict[tuple[str, str, str], str] = OrderedDict()
        self._limit = limit

    def get(self, key: tuple[str, str, str]) -> str | None:
        found = self._ids.get(key)
        if found is not None:
            self._ids.move_to_end(key)
        return found

    def put(self, key: tuple[str, str, str], file_id: str) -> None:
        self._ids[key] = file_id
        self._ids.move_to_end(key)
        while len(self._ids) > self._limit:
            self._ids.popitem(last=False)


@dataclass(frozen=True)
class StoredFile:
    filename: str
    mime: str
    content: bytes


def guess_mime(header: str | None, filename: str) -> str:
    mime = (header or "").split(";")[0].strip().lower()
    if mime and mime != "application/octet-stream":
        return mime
    guessed, _ = mimetypes.guess_type(filename)
    return guessed or "application/octet-stream"


_FILE_ID = re.compile(r"file-[A-Za-z0-9_-]{1,128}")
"""A file id's form (OpenAI's and LGOS's Files API's): nothing a URL path
would read as a separator, so a graph's ``file_id`` reaches no other route."""


class FilesApi:
    """An OpenAI-compatible Files API (``/v1/files``) over httpx, for one
    user (``headers``: a gateway key and the user it acts for)."""

    def __init__(
        self, http: httpx.AsyncClient, url: str, headers: Mapping[str, str]
    ) -> None:
        self._http = http
        self._root = api_root(url) + "/v1/files"
        self._headers = dict(headers)

    async def upload(self, filename: str, content: bytes, mime: str) -> str:
        try:
            response = await self._http.post(
                self._root,
                headers=self._headers,
                data={"purpose": "user_data"},
                files={"file": (filename, content, mime)},
            )
        except httpx.HTTPError as exc:
            raise LgosError(f"uploading {filename} failed: {exc}") from exc
        if response.status_code != 200:
            _, message = _error_message(response.status_code, response.content)
            raise LgosError(f"uploading {filename} failed: {message}")
        return str(response.json()["id"])

    async def download(self, file_id: str, max_bytes: int) -> StoredFile:
        if not _FILE_ID.fullmatch(file_id):
            shown = file_id if len(file_id) <= 40 else file_id[:40] + "..."
            raise LgosError(f"{shown!r} is not a file id")
        try:
            meta = await self._http.get(
                f"{self._root}/{file_id}", headers=self._headers
            )
            if meta.status_code != 200:
                _, message = _error_message(meta.status_code, meta.content)
                raise LgosError(f"{file_id}: {message}")
            info = meta.json()
            if int(info.get("bytes") or 0) > max_bytes:
                raise LgosError(f"{file_id} is larger than {max_bytes} bytes")
            data = await self._http.get(
                f"{self._root}/{file_id}/content", headers=self._headers
            )
        except httpx.HTTPError as exc:
            raise LgosError(f"downloading {file_id} failed: {exc}") from exc
        if data.status_code != 200:
            _, message = _error_message(data.status_code, data.content)
            raise LgosError(f"{file_id}: {message}")
        filename = str(info.get("filename") or file_id)
        return StoredFile(
            filename,
            guess_mime(data.headers.get("content-type"), filename),
            data.content,
        )


# ------------------------------------------------------------------ catalog


@dataclass(frozen=True)
class Graph:
    """One model of the gateway and its LGOS details (``model_info.lgos``)."""

    model: str
    description: str = ""
    features: frozenset[str] = frozenset()
    server_tools: tuple[str, ...] = ()
    client_tools: tuple[str, ...] = ()
    client_settings: Mapping[str, Any] | None = None
    stores_responses: bool = False
    """The deployment keeps Responses: turns chain by ``previous_response_id``."""

    def settings_defaults(self) -> Mapping[str, Any]:
        defaults = (self.client_settings or {}).get("defaults")
        return defaults if isinstance(defaults, Mapping) else {}


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(sorted({v for v in value if isinstance(v, str) and v}))


def graphs_from_model_info(data: Any) -> list[Graph]:
    """Every model of a ``GET /model/info`` answer that carries LGOS details."""
    entries = data.get("data") if isinstance(data, Mapping) else None
    graphs: dict[str, Graph] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping):
            continue
        name = entry.get("model_name")
        info = entry.get("model_info")
        lgos = info.get("lgos") if isinstance(info, Mapping) else None
        if not isinstance(name, str) or not isinstance(lgos, Mapping):
            continue
        settings = lgos.get("client_settings")
        description = lgos.get("description")
        graphs.setdefault(
            name,
            Graph(
                model=name,
                description=description if isinstance(description, str) else "",
                features=frozenset(_strings(lgos.get("features"))),
                server_tools=_strings(lgos.get("server_tools")),
                client_tools=_strings(lgos.get("client_tools")),
                client_settings=settings if isinstance(settings, Mapping) else None,
                stores_responses=lgos.get("stores_responses") is True,
            ),
        )
    return sorted(graphs.values(), key=lambda graph: graph.model)


def selected_names(wanted: str) -> list[str]:
    """The names of a comma-separated valve."""
    return [name.strip() for name in wanted.split(",") if name.strip()]


def selected(graphs: Sequence[Graph], wanted: str) -> list[Graph]:
    """The graphs named in the comma-separated ``wanted`` list (all when empty)."""
    names = selected_names(wanted)
    if not names:
        return list(graphs)
    return [graph for graph in graphs if graph.model in names]


# ------------------------------------------------------------------ history


@dataclass(frozen=True)
class PendingInterrupt:
    """A paused run: its Response id and exact interrupt items."""

    response_id: str
    calls: tuple[Json, ...]


def _encode(value: Any) -> str:
    raw = json.dumps(value, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _decode(text: str) -> Any:
    try:
        return json.loads(base64.urlsafe_b64decode(text.encode()))
    except (ValueError, binascii.Error):
        return None


def pending_marker(pending: PendingInterrupt) -> str:
    record = {"response_id": pending.response_id, "calls": list(pending.calls)}
    return f'\n\n[{PENDING_LABEL}]: # "{_encode(record)}"\n'


def resumed_marker(response_id: str) -> str:
    return f'\n\n[{RESUMED_LABEL}]: # "{_encode(response_id)}"\n'


def response_marker(response_id: str) -> str:
    return f'\n\n[{RESPONSE_LABEL}]: # "{_encode(response_id)}"\n'


@dataclass(frozen=True)
class Markers:
    """What an assistant message's hidden markers say."""

    visible: str
    pending: PendingInterrupt | None = None
    response_id: str | None = None
    """The Response its turn ended with (deployments that keep Responses)."""


def read_markers(text: str) -> Markers:
    """The visible text of an assistant message, its unanswered pause and the
    Response its turn ended with."""
    visible: list[str] = []
    pending: PendingInterrupt | None = None
    response_id: str | None = None
    for line in text.split("\n"):
        match = _MARKER.match(line)
        if match is None:
            if line.strip() != f"*{WAITING}*":  # our hint, not the graph's words
                visible.append(line)
            continue
        value = _decode(match.group(2))
        if match.group(1) == PENDING_LABEL and isinstance(value, dict):
            calls = value.get("calls")
            if isinstance(value.get("response_id"), str) and isinstance(calls, list):
                pending = PendingInterrupt(value["response_id"], tuple(calls))
        elif match.group(1) == RESPONSE_LABEL and isinstance(value, str):
            response_id = value
        elif pending is not None and value == pending.response_id:
            pending = None
    return Markers("\n".join(visible).strip(), pending, response_id)


def message_text(content: Any) -> str:
    """The text of an Open WebUI message (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def user_item(text: str, file_ids: Sequence[str] = ()) -> Json:
    content: list[Json] = []
    if text:
        content.append({"type": "input_text", "text": text})
    content.extend({"type": "input_file", "file_id": file_id} for file_id in file_ids)
    return {"type": "message", "role": "user", "content": content}


@dataclass
class Conversation:
    """Open WebUI's messages as Responses input: earlier turns, the new one."""

    history: list[Json]
    user_text: str
    pending: PendingInterrupt | None
    chained: str | None = None
    """The Response the assistant message just before the new user message
    ended with: it covers ``history``, so a turn may name it instead."""


def read_conversation(messages: Sequence[Json]) -> Conversation:
    """Earlier turns as input items, the last user message's text, and the
    pause the last assistant message left unanswered (if any)."""
    history: list[Json] = []
    last_user = max(
        (i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1
    )
    pending: PendingInterrupt | None = None
    chained: str | None = None
    for index, message in enumerate(messages[: max(last_user, 0)]):
        role = message.get("role")
        text = message_text(message.get("content"))
        if role == "assistant":
            markers = read_markers(text)
            text, pending, chained = (
                markers.visible,
                markers.pending,
                markers.response_id,
            )
            if text:
                history.append({"role": "assistant", "content": text})
        elif role in ("user", "system") and text:
            history.append(
                user_item(text) if role == "user" else {"role": role, "content": text}
            )
        if role == "user" and index < last_user:
            pending = chained = None
    user_text = (
        message_text(messages[last_user].get("content")) if last_user >= 0 else ""
    )
    return Conversation(
        history=history, user_text=user_text, pending=pending, chained=chained
    )


# ------------------------------------------------------------------ mapping


@dataclass(frozen=True)
class Say:
    """Answer text for the chat message."""

    text: str


@dataclass(frozen=True)
class Emit:
    """An ``__event_emitter__`` event."""

    event: Json


@dataclass(frozen=True)
class Finished:
    """The terminal Response object."""

    response: Json


Action = Say | Emit | Finished


def status_event(description: str, *, done: bool = False) -> Json:
    return {"type": "status", "data": {"description": description, "done": done}}


def source_event(annotation: Mapping[str, Any], cited: str = "") -> Json:
    """A ``url_citation`` as Open WebUI's source event (its citation chips)."""
    url = str(annotation.get("url", ""))
    title = str(annotation.get("title") or url)
    return {
        "type": "source",
        "data": {
            "source": {"name": title, "url": url},
            "document": [cited or title],
            "metadata": [{"source": url, "name": title}],
        },
    }


@dataclass
class StreamState:
    """What one Response's stream has shown so far."""

    commentary: set[str] = field(default_factory=set)
    cited: set[str] = field(default_factory=set)
    texts: dict[str, str] = field(default_factory=dict)
    last_status: str = ""


def _item_text(item: Mapping[str, Any]) -> str:
    return "".join(
        str(part.get("text", ""))
        for part in item.get("content") or []
        if isinstance(part, dict)
    )


def map_event(event: Mapping[str, Any], state: StreamState) -> list[Action]:
    """The UI actions for one Responses stream event.

    Commentary messages become status events; other messages' text deltas
    and refusals are the answer; ``url_citation`` annotations become source
    events (once per URL); the terminal Response ends the stream.
    """
    kind = event.get("type")
    if kind == "response.output_item.added":
        item = event.get("item") or {}
        if item.get("type") == "message" and item.get("phase") == "commentary":
            state.commentary.add(str(item.get("id")))
        return []
    if kind == "response.output_item.done":
        item = event.get("item") or {}
        if str(item.get("id")) in state.commentary:
            text = _item_text(item).strip()
            if text:
                state.last_status = text
                return [Emit(status_event(text))]
        return []
    if kind in ("response.output_text.delta", "response.refusal.delta"):
        item_id = str(event.get("item_id"))
        delta = str(event.get("delta") or "")
        if item_id in state.commentary or not delta:
            return []
        state.texts[item_id] = state.texts.get(item_id, "") + delta
        return [Say(delta)]
    if kind == "response.output_text.annotation.added":
        item_id = str(event.get("item_id"))
        annotation = event.get("annotation") or {}
        if item_id in state.commentary or annotation.get("type") != "url_citation":
            return []
        url = str(annotation.get("url", ""))
        if not url or url in state.cited:
            return []
        state.cited.add(url)
        text = state.texts.get(item_id, "")
        start, end = annotation.get("start_index"), annotation.get("end_index")
        cited = (
            text[start : end + 1]
            if isinstance(start, int) and isinstance(end, int)
            else ""
        )
        return [Emit(source_event(annotation, cited))]
    if kind in TERMINAL:
        return [Finished(dict(event.get("response") or {}))]
    if kind == "error":
        raise LgosError(str(event.get("message") or "the stream reported an error"))
    return []


def interrupt_items(response: Mapping[str, Any]) -> list[Json]:
    """The items presenting a pause: ``lgos_interrupt`` calls, or
    ``mcp_approval_request`` items for graphs that present MCP approvals."""
    return [
        item
        for item in response.get("output") or []
        if isinstance(item, dict)
        and (
            item.get("type") == APPROVAL_REQUEST
            or (
                item.get("type") == "function_call"
                and item.get("name") == INTERRUPT_TOOL
            )
        )
    ]


def interrupt_key(item: Mapping[str, Any]) -> str:
    """The id a resume answers: a call id, or an approval request's id."""
    approval = item.get("type") == APPROVAL_REQUEST
    return str(item.get("id" if approval else "call_id") or "")


def replayable(items: Sequence[Json]) -> list[Json]:
    """Items a later request may replay: approval requests and their answers
    only travel with the paused Response's ``previous_response_id``."""
    return [
        item
        for item in items
        if item.get("type") not in (APPROVAL_REQUEST, "mcp_approval_response")
    ]


def function_calls(response: Mapping[str, Any], name: str | None = None) -> list[Json]:
    return [
        item
        for item in response.get("output") or []
        if isinstance(item, dict)
        and item.get("type") == "function_call"
        and (name is None or item.get("name") == name)
    ]


def failure(response: Mapping[str, Any]) -> str | None:
    """Why a terminal Response did not complete, or ``None`` when it did."""
    status = response.get("status")
    if status == "completed":
        return None
    if status == "incomplete":
        details = response.get("incomplete_details") or {}
        return f"The answer was cut short ({details.get('reason') or 'incomplete'})."
    error = response.get("error") or {}
    if error.get("code") == "interrupt_rejected":
        return f"Not approved, the run ended: {error.get('message')}"
    return f"The graph failed: {error.get('message') or status}."


@dataclass(frozen=True)
class Question:
    """What one ``lgos_interrupt`` call asks."""

    call_id: str
    question: str
    choices: tuple[str, ...] = ()
    allow_other: bool = False


def read_question(call: Mapping[str, Any]) -> Question:
    """The question of a call; a payload without one is shown as its JSON.
    An approval request always offers ``approve`` and ``reject``."""
    call_id = interrupt_key(call)
    raw = call.get("arguments", "")
    try:
        payload = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        payload = None
    if call.get("type") == APPROVAL_REQUEST:
        text = raw if isinstance(raw, str) else json.dumps(raw)
        asked = payload.get("question") if isinstance(payload, dict) else None
        question = (
            asked if isinstance(asked, str) else f"Approve {call.get('name')}? {text}"
        )
        return Question(call_id, question, choices=APPROVAL_CHOICES)
    if not isinstance(payload, dict) or not isinstance(payload.get("question"), str):
        return Question(call_id, raw if isinstance(raw, str) else json.dumps(raw))
    choices = payload.get("choices")
    return Question(
        call_id=call_id,
        question=payload["question"],
        choices=tuple(
            c if isinstance(c, str) else json.dumps(c)
            for c in (choices if isinstance(choices, list) else [])
        ),
        allow_other=payload.get("allow_other") is True,
    )


def dialog_requests(questions: Sequence[Question]) -> list[Json]:
    """The ``__event_call__`` payloads that ask ``questions``.

    With choices: one ``request:user_input`` dialog (Open WebUI's own
    question form) holding every question of the pause. Free-text questions
    only: one ``input`` dialog each.
    """
    if any(q.choices for q in questions):
        return [
            {
                "type": "request:user_input",
                "data": {
                    "questions": [
                        {
                            "id": q.call_id,
                            "header": f"Question {n}"
                            if len(questions) > 1
                            else "Question",
                            "question": q.question,
                            "options": [
                                {"label": choice, "description": choice}
                                for choice in q.choices
                            ],
                            "allow_other": q.allow_other or not q.choices,
                        }
                        for n, q in enumerate(questions, start=1)
                    ],
                    "allow_other": any(
                        q.allow_other or not q.choices for q in questions
                    ),
                    "timeout_ms": 240_000,
                },
            }
        ]
    return [
        {
            "type": "input",
            "data": {
                "title": "The graph asks",
                "message": q.question,
                "placeholder": "Your answer",
            },
        }
        for q in questions
    ]


def dialog_answers(
    questions: Sequence[Question], replies: Sequence[Any]
) -> dict[str, str] | None:
    """One answer per call from the dialogs' replies; ``None`` when the user
    cancelled, the dialog timed out or an answer is missing."""
    if len(replies) == 1 and isinstance(replies[0], dict) and "answers" in replies[0]:
        reply = replies[0]
        if reply.get("status") != "answered" or not isinstance(reply["answers"], dict):
            return None
        answers: dict[str, str] = {}
        for question in questions:
            answer = reply["answers"].get(question.call_id)
            if not isinstance(answer, dict):
                return None
            text = (
                answer.get("label")
                if answer.get("type") == "option"
                else answer.get("text")
            )
            if not isinstance(text, str) or not text.strip():
                return None
            answers[question.call_id] = text.strip()
        return answers
    if len(replies) != len(questions):
        return None
    texts = {
        q.call_id: r.strip()
        for q, r in zip(questions, replies, strict=True)
        if isinstance(r, str)
    }
    return texts if len(texts) == len(questions) and all(texts.values()) else None


def interrupt_outputs(calls: Sequence[Json], answers: Mapping[str, str]) -> list[Json]:
    """One answer item per pause item: a ``function_call_output``, or an
    ``mcp_approval_response`` that approves only on ``approve``."""
    outputs: list[Json] = []
    for call in calls:
        key = interrupt_key(call)
        if call.get("type") == APPROVAL_REQUEST:
            approve = answers[key].strip().lower() == "approve"
            outputs.append(
                {
                    "type": "mcp_approval_response",
                    "approval_request_id": key,
                    "approve": approve,
                }
            )
        else:
            outputs.append(
                {"type": "function_call_output", "call_id": key, "output": answers[key]}
            )
    return outputs


def display_status(call_id: str, status: Mapping[str, Any]) -> Json:
    output = json.dumps(dict(status), separators=(",", ":"))
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def call_arguments(call: Mapping[str, Any]) -> dict[str, Any]:
    try:
        arguments = json.loads(call.get("arguments") or "{}")
    except ValueError:
        return {}
    return arguments if isinstance(arguments, dict) else {}


TEXT_MIMES = ("text/", "application/json", "application/xml", "application/csv")


def present_file(stored: StoredFile, title: str) -> tuple[list[Json], str]:
    """How the chat shows a ``display_file`` file: events and answer text.

    Images go to the message's files (Open WebUI shows them inline, as it
    does generated images); text files become a fenced block; any other file
    can only be named (a Function cannot offer a download link).
    """
    caption = title or stored.filename
    if stored.mime.startswith("image/"):
        data = base64.b64encode(stored.content).decode()
        url = f"data:{stored.mime};base64,{data}"
        event = {
            "type": "files",
            "data": {"files": [{"type": "image", "url": url, "name": stored.filename}]},
        }
        return [event], f"\n\n*{caption}* ({stored.filename})\n\n"
    if stored.mime.startswith(TEXT_MIMES):
        body = stored.content.decode(errors="replace")
        fence = "````" if "```" in body else "```"
        return (
            [],
            f"\n\n**{caption}** ({stored.filename})\n\n{fence}\n{body}\n{fence}\n\n",
        )
    size = len(stored.content)
    return [], f"\n\n**{caption}**: {stored.filename} ({stored.mime}, {size} bytes)\n\n"


def settings_for(graph: Graph, user_settings: str) -> str | None:
    """``metadata.lgos_settings`` from the user's settings valve.

    The valve is a JSON object keyed by model: ``{"lgos/simple":
    {"audience": "expert"}}``. Values equal to the graph's advertised
    defaults are left out; LGOS validates the rest.
    """
    if not user_settings.strip():
        return None
    try:
        everything = json.loads(user_settings)
    except ValueError as exc:
        raise LgosError(f"Your LGOS settings valve is not valid JSON: {exc}") from exc
    if not isinstance(everything, dict):
        raise LgosError(
            "Your LGOS settings valve must be a JSON object keyed by model."
        )
    mine = everything.get(graph.model)
    if mine is None:
        return None
    if not isinstance(mine, dict):
        raise LgosError(f"Your LGOS settings for {graph.model} must be a JSON object.")
    defaults = graph.settings_defaults()
    changed = {
        key: value
        for key, value in mine.items()
        if key not in defaults or not _same(value, defaults[key])
    }
    if not changed:
        return None
    encoded = json.dumps(changed, separators=(",", ":"), ensure_ascii=False)
    if len(encoded) > METADATA_VALUE_LIMIT:
        raise LgosError(
            f"Your settings for {graph.model} take {len(encoded)} characters; "
            f"metadata values allow {METADATA_VALUE_LIMIT}."
        )
    return encoded


def _same(value: Any, default: Any) -> bool:
    if isinstance(value, bool) or isinstance(default, bool):
        return type(value) is type(default) and value == default
    return bool(value == default)


def server_tools_for(graph: Graph, user_tools: str) -> list[str]:
    """The server tools to select: the user valve's list for this model
    (a JSON object keyed by model), else every tool the graph advertises."""
    if not user_tools.strip():
        return list(graph.server_tools)
    try:
        everything = json.loads(user_tools)
    except ValueError as exc:
        raise LgosError(
            f"Your LGOS server tools valve is not valid JSON: {exc}"
        ) from exc
    if not isinstance(everything, dict):
        raise LgosError("Your LGOS server tools valve must be a JSON object.")
    mine = everything.get(graph.model)
    if mine is None:
        return list(graph.server_tools)
    if not isinstance(mine, list):
        raise LgosError(f"Your server tools for {graph.model} must be a JSON list.")
    return [name for name in graph.server_tools if name in mine]


def tool_selector(name: str) -> Json:
    return (
        {"type": "web_search"}
        if name == "web_search"
        else {"type": "custom", "name": name}
    )


def request_body(
    graph: Graph,
    items: list[Json],
    *,
    chat_id: str | None,
    settings: str | None,
    offer_display_file: bool,
    server_tools: Sequence[str] = (),
    previous_response_id: str | None = None,
) -> Json:
    """The ``POST /v1/responses`` body of one request."""
    metadata: dict[str, str] = {}
    if chat_id:
        metadata[CONVERSATION_KEY] = chat_id
    if settings is not None:
        metadata[SETTINGS_KEY] = settings
    # A deployment that keeps Responses keeps these too, so the next turn can
    # name them instead of replaying the history.
    body: Json = {"model": graph.model, "input": items, "store": graph.stores_responses}
    if metadata:
        body["metadata"] = metadata
    tools = [tool_selector(name) for name in server_tools]
    if offer_display_file and DISPLAY_FILE in graph.client_tools:
        tools.append(dict(DISPLAY_FILE_TOOL))
    if tools:
        body["tools"] = tools
    if previous_response_id is not None:
        body["previous_response_id"] = previous_response_id
    return body


def explain(exc: Exception) -> str:
    """A user-facing sentence for a failed request."""
    if isinstance(exc, GatewayError) and exc.code == "interrupt_state_conflict":
        return (
            "The server no longer has this question pending (already answered "
            "or expired). Send a new message to start again."
        )
    if isinstance(exc, GatewayError) and exc.code == "run_busy":
        return "This paused run is busy with another answer; try again in a moment."
    return str(exc)


# ------------------------------------------------------------------ Pipe


class Pipe:
    class Valves(BaseModel):
        gateway_url: str = Field(
            default="http://127.0.0.1:4000/v1",
            description="LiteLLM's OpenAI base URL (…/v1).",
        )
        gateway_key: str = Field(
            default="",
            description="A LiteLLM UI key (LGOS_GATEWAY_UI_KEYS): it runs "
            "graphs and names each user, and administers nothing. Never the "
            "master key: with WEBUI_AUTH=False every user reads these valves.",
        )
        files_url: str = Field(
            default="",
            description="The Files API base URL (…/v1); "
            "empty: no uploads and no display_file.",
        )
        files_key: str = Field(
            default="",
            description="A Files API gateway key (LGOS_FILES_GATEWAY_KEYS): it "
            "acts for each user, whose files are theirs alone.",
        )
        models: str = Field(
            default="",
            description="Comma-separated models to offer; "
            "empty: every model with LGOS details.",
        )
        skip_models: str = Field(
            default="",
            description="Comma-separated models Open WebUI's own connection "
            "already lists; left out here so each is listed once.",
        )
        open_webui_url: str = Field(
            default="",
            description="Open WebUI's own address, where this Function reads "
            "attachments back as the user; required for attachments (the "
            "address a request came in on is never trusted: its Host header "
            "is the client's to choose).",
        )
        follow_url: str = Field(
            default="",
            description="Where background runs are followed: the gateway's "
            "pass-through to LGOS (…/lgos/v1); empty: the gateway's own.",
        )
        timeout: float = Field(
            default=300.0, description="Seconds per gateway request."
        )
        max_display_bytes: int = Field(default=10 * 1024 * 1024)

    class UserValves(BaseModel):
        settings: str = Field(
            default="",
            description="Runtime settings per graph, as JSON: "
            '{"lgos/simple": {"audience": "expert"}}.',
        )
        server_tools: str = Field(
            default="",
            description="Server tools to select per graph, as JSON "
            '{"lgos/server-tools": ["web_search"]}; a graph not named: all.',
        )
        background: bool = Field(
            default=False,
            description="Run graphs that support it in the background: the "
            "run goes on if the connection drops, is followed live, and the "
            "stop button cancels it.",
        )

    def __init__(self) -> None:
        self.type = "manifold"
        self.name = "LGOS · "
        self.valves = self.Valves()
        self._catalog: tuple[float, list[Graph]] = (0.0, [])
        self._uploaded = UploadCache()

    # -- catalog

    async def graphs(
        self, http: httpx.AsyncClient, *, fresh: bool = False
    ) -> list[Graph]:
        stamp, cached = self._catalog
        if cached and not fresh and time.monotonic() - stamp < 30:
            return cached
        url = api_root(self.valves.gateway_url) + "/model/info"
        try:
            response = await http.get(url, headers=credentials(self.valves.gateway_key))
        except httpx.HTTPError as exc:
            raise LgosError(f"GET {url} failed: {exc}") from exc
        if response.status_code != 200:
            _, message = _error_message(response.status_code, response.content)
            raise LgosError(f"GET {url} answered {response.status_code}: {message}")
        graphs = selected(graphs_from_model_info(response.json()), self.valves.models)
        self._catalog = (time.monotonic(), graphs)
        return graphs

    async def pipes(self) -> list[Json]:
        try:
            async with httpx.AsyncClient(timeout=10) as http:
                graphs = await self.graphs(http, fresh=True)
        except LgosError as exc:
            log.warning("LGOS catalog unavailable: %s", exc)
            return [{"id": "unavailable", "name": f"unavailable ({exc})"}]
        skipped = set(selected_names(self.valves.skip_models))
        return [
            {"id": graph.model, "name": graph.model}
            for graph in graphs
            if graph.model not in skipped
        ]

    # -- one chat turn

    async def pipe(
        self,
        body: Json,
        __user__: Json | None = None,
        __event_emitter__: Emitter | None = None,
        __event_call__: Emitter | None = None,
        __metadata__: Json | None = None,
        __files__: list[Json] | None = None,
        __request__: Any = None,
        __task__: str | None = None,
    ) -> AsyncIterator[str]:
        if __task__:
            # Title, tag and follow-up generation must never run a workflow.
            return
        turn = _Turn(self, body, __user__ or {}, __event_emitter__, __event_call__)
        turn.chat_id = (__metadata__ or {}).get("chat_id")
        turn.files = [f for f in __files__ or [] if isinstance(f, dict)]
        turn.request = __request__
        async with aclosing(turn.run()) as texts:
            async for text in texts:
                yield text


class _Turn:
    """One ``pipe`` call: the requests of one user turn and what they show."""

    def __init__(
        self,
        pipe: Pipe,
        body: Json,
        user: Json,
        emitter: Emitter | None,
        caller: Emitter | None,
    ) -> None:
        self.pipe = pipe
        self.valves = pipe.valves
        self.body = body
        self.user_valves = user.get("valves")
        end_user = user.get("id")
        self.end_user = str(end_user) if end_user else None
        """Open WebUI's id of the signed-in user: the requests are for them."""
        self.gateway_headers = credentials(self.valves.gateway_key, self.end_user)
        self.emitter = emitter
        self.caller = caller
        self.chat_id: str | None = None
        self.files: list[Json] = []
        self.request: Any = None
        self.last_status = ""

    async def emit(self, event: Json) -> None:
        if self.emitter is not None:
            await self.emitter(event)

    def user_valve(self, name: str) -> str:
        return str(getattr(self.user_valves, name, "") or "")

    async def run(self) -> AsyncGenerator[str, None]:
        model = str(self.body.get("model", "")).split(".", 1)[-1]
        try:
            async with httpx.AsyncClient(timeout=self.valves.timeout) as http:
                graphs = {g.model: g for g in await self.pipe.graphs(http)}
                graph = graphs.get(model)
                if graph is None:
                    raise LgosError(f"The gateway offers no LGOS graph {model!r}.")
                async with aclosing(self.converse(http, graph)) as texts:
                    async for text in texts:
                        yield text
        except LgosError as exc:
            yield f"\n\n> **LGOS:** {explain(exc)}\n"
        finally:
            if self.last_status:
                await self.emit(status_event(self.last_status, done=True))

    async def converse(
        self, http: httpx.AsyncClient, graph: Graph
    ) -> AsyncGenerator[str, None]:
        conversation = read_conversation(list(self.body.get("messages") or []))
        settings = settings_for(graph, self.user_valve("settings"))
        tools = server_tools_for(graph, self.user_valve("server_tools"))
        files = self.files_api(http)
        background = self.in_background(graph)
        previous: str | None = None
        replay: list[Json] | None = None
        if conversation.pending is not None:
            # The user typed the answer to a question the dialog did not get.
            pending = conversation.pending
            answers = {
                interrupt_key(call): conversation.user_text.strip()
                for call in pending.calls
            }
            ledger = [*conversation.history]
            items = interrupt_outputs(pending.calls, answers)
            ledger += replayable([*pending.calls, *items])
            previous = pending.response_id
            yield resumed_marker(pending.response_id)
        else:
            file_ids = await self.upload_attachments(http, graph, files)
            turn = user_item(conversation.user_text, file_ids)
            items = [*conversation.history, turn]
            ledger = list(items)
            if graph.stores_responses and conversation.chained:
                # Name the Response the history ended with and send only the
                # new turn; the history is the fallback.
                replay, items, previous = items, [turn], conversation.chained
        for _ in range(MAX_CLIENT_ROUNDS + 1):
            body = request_body(
                graph,
                items,
                chat_id=self.chat_id,
                settings=settings,
                offer_display_file=files is not None,
                server_tools=tools,
                previous_response_id=previous,
            )
            response: Json = {}
            state = StreamState()
            streamed = self.stream(http, body, state, background=background)
            try:
                async with aclosing(streamed) as actions:
                    async for action in actions:
                        if isinstance(action, Say):
                            yield action.text
                        elif isinstance(action, Emit):
                            await self.emit(action.event)
                        else:
                            response = action.response
            except GatewayError as exc:
                if replay is None or exc.status != 404:
                    raise
                # The named Response is gone (deleted, expired, a restarted
                # store): replay the history, which starts a new chain.
                items, previous, replay = replay, None, None
                continue
            replay = None
            problem = failure(response)
            if problem is not None:
                yield f"\n\n> **LGOS:** {problem}\n"
                return
            interrupts = interrupt_items(response)
            if interrupts:
                pending = PendingInterrupt(str(response.get("id")), tuple(interrupts))
                yield pending_marker(pending)
                asked = await self.ask(interrupts)
                if asked is None:
                    yield f"\n\n*{WAITING}*\n"
                    return
                yield resumed_marker(pending.response_id)
                items = interrupt_outputs(interrupts, asked)
                ledger += replayable([*response.get("output", []), *items])
                previous = pending.response_id
                continue
            calls = function_calls(response)
            if not calls:
                if graph.stores_responses and response.get("id"):
                    yield response_marker(str(response["id"]))
                return
            outputs = []
            for call in calls:
                text, output = await self.client_call(call, files)
                if text:
                    yield text
                outputs.append(output)
            ledger += [*response.get("output", []), *outputs]
            if graph.stores_responses:
                items, previous = outputs, str(response.get("id"))
            else:
                items, previous = list(ledger), None
        yield "\n\n> **LGOS:** stopped after too many client tool rounds.\n"

    def follow_url(self) -> str:
        configured = self.valves.follow_url.strip().rstrip("/")
        return configured or api_root(self.valves.gateway_url) + FOLLOW_PATH

    def in_background(self, graph: Graph) -> bool:
        return BACKGROUND in graph.features and bool(
            getattr(self.user_valves, "background", False)
        )

    async def stream(
        self,
        http: httpx.AsyncClient,
        body: Json,
        state: StreamState,
        *,
        background: bool = False,
    ) -> AsyncGenerator[Action, None]:
        if background:
            async with aclosing(self.follow(http, body, state)) as followed:
                async for action in followed:
                    yield action
            return
        finished = False
        events = stream_response(
            http, self.valves.gateway_url, self.gateway_headers, body
        )
        async with aclosing(events):
            async for event in events:
                for action in map_event(event, state):
                    if isinstance(action, Emit) and action.event["type"] == "status":
                        self.last_status = str(action.event["data"]["description"])
                    finished = finished or isinstance(action, Finished)
                    yield action
        if not finished:
            raise LgosError("the answer stream ended without a final response")

    async def follow(
        self, http: httpx.AsyncClient, body: Json, state: StreamState
    ) -> AsyncGenerator[Action, None]:
        """Submit ``body`` with ``background=true`` through the gateway, then
        follow the run live on the follow route by LGOS's id, reattaching
        after the last sequence number seen when the connection drops.
        Stopping the chat (the stop button) cancels the run."""
        headers = self.gateway_headers
        queued = await gateway_json(
            http,
            "POST",
            api_root(self.valves.gateway_url) + "/v1/responses",
            headers,
            {**body, "background": True},
        )
        run_id = upstream_response_id(str(queued.get("id") or ""))
        follow_url = self.follow_url()
        self.last_status = "Running in the background"
        await self.emit(status_event(self.last_status))
        after, idle, response = -1, 0, None
        try:
            while response is None:
                seen, dropped = after, False
                try:
                    async with aclosing(
                        follow_response(http, follow_url, headers, run_id, after)
                    ) as events:
                        async for event in events:
                            number = event.get("sequence_number")
                            if isinstance(number, int):
                                if number <= after:
                                    continue  # already shown
                                after = number
                            for action in map_event(event, state):
                                if isinstance(action, Finished):
                                    response = action.response
                                elif isinstance(action, Emit) and (
                                    action.event["type"] == "status"
                                ):
                                    self.last_status = str(
                                        action.event["data"]["description"]
                                    )
                                yield action
                except httpx.TransportError:
                    dropped = True  # reattach after the last event seen
                except GatewayError as exc:
                    if exc.status == 404 and exc.code is None and after < 0:
                        # The gateway's own 404: it has no follow route.
                        raise LgosError(
                            f"The gateway has no follow route for background "
                            f"runs at {follow_url}: set the follow_url valve, "
                            "or turn your background valve off."
                        ) from exc
                    raise
                if response is None and not dropped:
                    # A cancelled run's stream ends without a terminal event.
                    # (After a drop, the next follow replays what was missed,
                    # even when the run has ended meanwhile.)
                    snapshot = await gateway_json(
                        http, "GET", f"{follow_url}/responses/{run_id}", headers
                    )
                    if snapshot.get("status") in TERMINAL_STATUSES:
                        response = snapshot
                        yield Finished(snapshot)
                idle = 0 if after > seen else idle + 1
                if response is None and idle > REATTACH_LIMIT:
                    raise LgosError(
                        "Lost the connection to the background run; it keeps "
                        "running on the server."
                    )
        except (asyncio.CancelledError, GeneratorExit):
            if response is None:
                await self._cancel_quietly(http, follow_url, run_id)
            raise
        status = str(response.get("status"))
        self.last_status = BACKGROUND_ENDINGS.get(status, "Background run ended")
        await self.emit(status_event(self.last_status))

    async def _cancel_quietly(
        self, http: httpx.AsyncClient, follow_url: str, run_id: str
    ) -> None:
        """The chat was stopped: cancel its background run (best effort)."""
        try:
            await asyncio.wait_for(
                gateway_json(
                    http,
                    "POST",
                    f"{follow_url}/responses/{run_id}/cancel",
                    self.gateway_headers,
                ),
                timeout=10,
            )
        except (TimeoutError, LgosError):
            log.warning("could not cancel the stopped background run")

    async def ask(self, calls: Sequence[Json]) -> dict[str, str] | None:
        questions = [read_question(call) for call in calls]
        await self.emit(status_event("Waiting for your answer"))
        self.last_status = "Waiting for your answer"
        if self.caller is None:
            return None
        replies = [await self.caller(request) for request in dialog_requests(questions)]
        answers = dialog_answers(questions, replies)
        if answers is not None:
            self.last_status = "Answer sent"
            await self.emit(status_event(self.last_status))
        return answers

    def files_api(self, http: httpx.AsyncClient) -> FilesApi | None:
        if not self.valves.files_url:
            return None
        return FilesApi(
            http,
            self.valves.files_url,
            credentials(self.valves.files_key, self.end_user),
        )

    async def client_call(self, call: Json, files: FilesApi | None) -> tuple[str, Json]:
        call_id = str(call.get("call_id"))
        if call.get("name") != DISPLAY_FILE:
            return "", display_status(
                call_id, {"error": "this client has no such function"}
            )
        arguments = call_arguments(call)
        file_id = arguments.get("file_id")
        if files is None or not isinstance(file_id, str) or not file_id:
            reason = (
                "no file_id given" if files is not None else "no Files API configured"
            )
            return "", display_status(call_id, {"displayed": False, "error": reason})
        try:
            stored = await files.download(file_id, self.valves.max_display_bytes)
        except LgosError as exc:
            return f"\n\n> A file could not be shown: {exc}\n", display_status(
                call_id, {"displayed": False, "error": str(exc)}
            )
        name = arguments.get("filename")
        if isinstance(name, str) and name.strip():
            stored = StoredFile(
                name.strip().rsplit("/", 1)[-1], stored.mime, stored.content
            )
        title = arguments.get("title")
        events, text = present_file(stored, title if isinstance(title, str) else "")
        for event in events:
            await self.emit(event)
        return text, display_status(
            call_id,
            {"displayed": True, "file_id": file_id, "filename": stored.filename},
        )

    async def upload_attachments(
        self, http: httpx.AsyncClient, graph: Graph, files: FilesApi | None
    ) -> list[str]:
        """Copy this turn's attachments from Open WebUI to the Files API."""
        attached = [
            f for f in self.files if f.get("type", "file") == "file" and f.get("id")
        ]
        if not attached:
            return []
        if FILE_INPUTS not in graph.features:
            await self.emit(
                status_event(
                    f"{graph.model} does not accept files; they were not sent",
                    done=True,
                )
            )
            return []
        if files is None:
            raise LgosError(
                "No Files API is configured, so attachments cannot be sent."
            )
        file_ids = []
        for entry in attached:
            # Per user and Files API: another user's attachment (its id sent
            # in a crafted chat) is read through Open WebUI with this user's
            # token, never taken from the cache; a changed valve must not
            # reuse another store's ids.
            key = (self.end_user or "", self.valves.files_url, str(entry["id"]))
            file_id = self.pipe._uploaded.get(key)
            if file_id is None:
                name, mime, content = await self.read_attachment(http, entry)
                file_id = await files.upload(name, content, mime)
                self.pipe._uploaded.put(key, file_id)
            file_ids.append(file_id)
        return file_ids

    async def read_attachment(
        self, http: httpx.AsyncClient, entry: Json
    ) -> tuple[str, str, bytes]:
        """An attachment's bytes through Open WebUI's own files API, as the user.

        Only from the configured ``open_webui_url``: the user's token goes
        nowhere else (the request's own address comes from its Host header,
        which the client chooses)."""
        base = self.valves.open_webui_url.strip()
        if not base:
            raise LgosError(
                "Attachments cannot be read: an admin sets the Function's "
                "open_webui_url valve to Open WebUI's own address."
            )
        headers = getattr(self.request, "headers", None) or {}
        cookies = getattr(self.request, "cookies", None) or {}
        token = headers.get("authorization") or (
            f"Bearer {cookies['token']}" if cookies.get("token") else ""
        )
        file_id = quote(str(entry["id"]), safe="")
        url = base.rstrip("/") + f"/api/v1/files/{file_id}/content"
        try:
            response = await http.get(
                url, headers={"Authorization": token} if token else {}
            )
        except httpx.HTTPError as exc:
            raise LgosError(f"reading the attachment failed: {exc}") from exc
        if response.status_code != 200:
            raise LgosError(
                f"reading the attachment answered HTTP {response.status_code}"
            )
        name = str(
            entry.get("name")
            or (entry.get("file") or {}).get("filename")
            or entry["id"]
        )
        return (
            name,
            guess_mime(response.headers.get("content-type"), name),
            response.content,
        )
