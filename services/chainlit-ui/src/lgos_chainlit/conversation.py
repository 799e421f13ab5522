"""One chat with one graph: requests, the ledger, client tools, interrupts.

``Conversation`` is everything the UI does between "the user sent something"
and "here is what to show", as an async stream of UI events, with no Chainlit
in it:

* ``send`` uploads attachments (graphs with ``file_inputs``), sends the ledger
  plus the new user message with the chat's metadata (``conversation_id``,
  changed ``lgos_settings``) and selected server tools, and streams the answer.
* After a completed Response it answers ``display_file`` calls (download,
  ``FileShown``, ``function_call_output``) and sends the follow-up request.
* An ``lgos_interrupt`` pause is saved (Response id + exact calls) before the
  first ``InterruptAsked``; ``answer`` collects one answer per call and then
  resumes with ``previous_response_id`` and only the matching outputs.

Committing is per exchange: the user message and output items enter the ledger
(and the saved state) only when a Response completed or ended incomplete; a
failed or refused request leaves the ledger as it was.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from openai import APIConnectionError, APIStatusError, AsyncOpenAI, OpenAIError

from lgos_chainlit.catalog import GraphInfo
from lgos_chainlit.chats import ChatState, ChatStore
from lgos_chainlit.events import (
    FileShown,
    InterruptAsked,
    Notice,
    StreamFinished,
    TurnFinished,
    UIEvent,
)
from lgos_chainlit.files import DISPLAY_FILE, DISPLAY_FILE_TOOL, FilesClient, FilesError
from lgos_chainlit.files import display_file as fetch_display_file
from lgos_chainlit.interrupts import (
    INTERRUPT_TOOL,
    AnswerError,
    PendingInterrupt,
    explain_rejection,
    keeps_pending,
)
from lgos_chainlit.ledger import (
    Item,
    Ledger,
    function_calls,
    function_output,
    item_json,
    user_message,
)
from lgos_chainlit.runtime_settings import (
    SettingField,
    changed_settings,
    encode_settings,
    request_metadata,
    setting_fields,
)
from lgos_chainlit.stream import StreamError, read_stream

FILE_INPUTS = "file_inputs"
MAX_CLIENT_ROUNDS = 4


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file the user attached in the UI (already on local disk)."""

    path: Path
    name: str
    mime: str | None = None


@dataclass
class _Exchange:
    """One request: what to send and what to commit with its output."""

    input: list[Item]
    commit_first: list[Item]
    previous_response_id: str | None = None
    resuming: PendingInterrupt | None = None


class Conversation:
    """A chat's requests to one graph, over the official SDK."""

    def __init__(
        self,
        client: AsyncOpenAI,
        graph: GraphInfo,
        state: ChatState,
        store: ChatStore,
        files: FilesClient | None = None,
    ) -> None:
        self.client = client
        self.graph = graph
        self.state = state
        self.store = store
        self.files = files
        self.ledger = Ledger(state.items)

    # ------------------------------------------------------------ request parts

    @property
    def fields(self) -> list[SettingField]:
        """The graph's runtime settings (none when the extension is missing)."""
        return [] if self.graph.limited else setting_fields(self.graph.client_settings)

    def metadata(self) -> dict[str, str]:
        """``conversation_id`` plus the changed settings, for every request."""
        changed = changed_settings(self.fields, self.state.settings)
        return request_metadata(self.state.thread_id, encode_settings(changed))

    def tools(self) -> list[Item]:
        """Selected server tools, plus ``display_file`` when the graph calls it."""
        tools: list[Item] = []
        for name in self.state.tools:
            if name in self.graph.server_tools:
                tools.append(
                    {"type": "web_search"}
                    if name == "web_search"
                    else {"type": "custom", "name": name}
                )
        if self.graph.offers_client_tool(DISPLAY_FILE) and self.files is not None:
            tools.append(dict(DISPLAY_FILE_TOOL))
        return tools

    def save(self) -> None:
        self.state.items = self.ledger.items
        self.store.save(self.state)

    # ------------------------------------------------------------ public API

    async def send(
        self, text: str, attachments: Sequence[Attachment] = ()
    ) -> AsyncIterator[UIEvent]:
        """A user turn: upload attachments, send, stream, follow client calls."""
        if self.state.pending is not None:
            yield Notice("warning", "Answer the pending question first.")
            async for event in self.ask_pending():
                yield event
            return
        file_ids: list[str] = []
        if attachments:
            async for event in self._upload(attachments, file_ids):
                yield event
            if len(file_ids) != len(attachments) and self._accepts_files():
                return
        if not text and not file_ids:
            return
        turn = [user_message(text, file_ids)]
        exchange = _Exchange(input=self.ledger.request_input(turn), commit_first=turn)
        async for event in self._run(exchange):
            yield event

    async def ask_pending(self) -> AsyncIterator[UIEvent]:
        """The next unanswered question of a saved pause (after a reload)."""
        pending = self.state.pending
        if pending is None:
            return
        prompt = pending.next_prompt()
        if prompt is not None:
            remaining = len(pending.calls) - len(pending.answers)
            yield InterruptAsked(prompt=prompt, remaining=remaining)

    async def answer(
        self, call_id: str, text: str, *, typed: bool = False
    ) -> AsyncIterator[UIEvent]:
        """Answer one question; when all are answered, resume the run."""
        pending = self.state.pending
        if pending is None:
            yield Notice("warning", "There is no pending question to answer.")
            return
        try:
            pending.answer(call_id, text, typed=typed)
        except AnswerError as exc:
            yield Notice("warning", str(exc).capitalize() + ".")
            async for event in self.ask_pending():
                yield event
            return
        self.save()
        if not pending.complete:
            async for event in self.ask_pending():
                yield event
            return
        exchange = _Exchange(
            input=pending.outputs(),
            commit_first=[*pending.calls, *pending.outputs()],
            previous_response_id=pending.response_id,
            resuming=pending,
        )
        async for event in self._run(exchange):
            yield event

    # ------------------------------------------------------------ internals

    def _accepts_files(self) -> bool:
        return (
            not self.graph.limited
            and self.graph.supports(FILE_INPUTS)
            and self.files is not None
        )

    async def _upload(
        self, attachments: Sequence[Attachment], file_ids: list[str]
    ) -> AsyncIterator[UIEvent]:
        if not self._accepts_files() or self.files is None:
            reason = (
                "no Files API is configured"
                if self.files is None
                else f"{self.graph.model} does not accept files"
            )
            yield Notice("warning", f"Attachments were not sent: {reason}.")
            return
        for attachment in attachments:
            try:
                file_ids.append(
                    await self.files.upload(
                        attachment.path, attachment.name, attachment.mime
                    )
                )
            except FilesError as exc:
                yield Notice("error", f"The message was not sent: {exc}.")
                return

    async def _request(self, exchange: _Exchange) -> Any:
        options: dict[str, Any] = {
            "model": self.graph.model,
            "input": exchange.input,
            "metadata": self.metadata(),
            "store": False,
        }
        tools = self.tools()
        if tools:
            options["tools"] = tools
        if exchange.previous_response_id is not None:
            options["previous_response_id"] = exchange.previous_response_id
        return await self.client.responses.create(stream=True, **cast(Any, options))

    def _refused(self, exchange: _Exchange, exc: Exception) -> list[UIEvent]:
        if isinstance(exc, APIStatusError):
            status, code = exc.status_code, exc.code
            body = exc.body
            message = str(body.get("message")) if isinstance(body, dict) else str(exc)
        else:
            status, code, message = 0, None, str(exc)
        pending = exchange.resuming
        if pending is None:
            prefix = f"HTTP {status}: " if status else ""
            return [Notice("error", f"The request failed: {prefix}{message}")]
        events: list[UIEvent] = [
            Notice("error", explain_rejection(status, code, message))
        ]
        if keeps_pending(code):
            pending.answers.clear()
            prompt = pending.next_prompt()
            if prompt is not None:
                events.append(
                    InterruptAsked(prompt=prompt, remaining=len(pending.calls))
                )
        else:
            self.state.pending = None
        self.save()
        return events

    async def _run(self, exchange: _Exchange) -> AsyncIterator[UIEvent]:
        for _ in range(MAX_CLIENT_ROUNDS + 1):
            try:
                stream = await self._request(exchange)
            except (APIStatusError, APIConnectionError) as exc:
                for event in self._refused(exchange, exc):
                    yield event
                return
            response: Any = None
            try:
                async for streamed in read_stream(stream):
                    if isinstance(streamed, StreamFinished):
                        response = streamed.response
                    else:
                        yield streamed
            except (StreamError, OpenAIError) as exc:
                if exchange.resuming is not None:
                    self.state.pending = None
                    self.save()
                yield Notice("error", f"The answer stream broke off: {exc}")
                return
            finally:
                await stream.close()
            yield _finished(response)
            follow_up = self._settle(exchange, response)
            async for event in follow_up.events:
                yield event
            if not follow_up.again:
                return
            # The client calls' outputs are in the ledger now: send it all.
            exchange = _Exchange(input=self.ledger.request_input(), commit_first=[])
        yield Notice("warning", "Stopped after too many client tool rounds.")

    def _settle(self, exchange: _Exchange, response: Any) -> _FollowUp:
        """Commit a finished exchange and work out what comes next."""
        if exchange.resuming is not None:
            self.state.pending = None
        if response.status == "failed":
            self.save()
            return _FollowUp(_events([]))
        output = [item_json(item) for item in response.output]
        calls = function_calls(output)
        interrupts = [c for c in calls if c.get("name") == INTERRUPT_TOOL]
        if interrupts or response.status != "completed":
            # Calls that will not be answered now must not enter the ledger.
            kept = [item for item in output if item.get("type") != "function_call"]
            self.ledger.commit([*exchange.commit_first, *kept])
            events: list[UIEvent] = []
            if interrupts:
                self.state.pending = PendingInterrupt(
                    response_id=response.id, calls=interrupts
                )
                if len(interrupts) != len(calls):
                    events.append(
                        Notice(
                            "warning",
                            "Other tool calls of the paused run were ignored.",
                        )
                    )
            elif calls:
                events.append(
                    Notice(
                        "warning",
                        "The answer was cut off; its tool calls were not run.",
                    )
                )
            self.save()  # the pause is saved before the question is shown
            return _FollowUp(self._then_ask(events))
        self.ledger.commit([*exchange.commit_first, *output])
        self.save()
        if not calls:
            return _FollowUp(_events([]))
        return _FollowUp(self._client_calls(calls), again=True)

    async def _then_ask(self, events: list[UIEvent]) -> AsyncIterator[UIEvent]:
        for event in events:
            yield event
        async for event in self.ask_pending():
            yield event

    async def _client_calls(self, calls: list[Item]) -> AsyncIterator[UIEvent]:
        outputs: list[Item] = []
        for call in calls:
            if call.get("name") == DISPLAY_FILE:
                shown, output = await fetch_display_file(call, self.files)
                if shown is not None:
                    yield FileShown(shown)
                else:
                    yield Notice(
                        "warning", f"A file could not be shown: {output['output']}"
                    )
            else:
                output = function_output(
                    str(call["call_id"]), '{"error":"this client has no such function"}'
                )
            outputs.append(output)
        self.ledger.commit(outputs)
        self.save()


@dataclass
class _FollowUp:
    """Events to show after an exchange, and whether to send another request."""

    events: AsyncIterator[UIEvent]
    again: bool = False


async def _events(events: list[UIEvent]) -> AsyncIterator[UIEvent]:
    for event in events:
        yield event


def _finished(response: Any) -> TurnFinished:
    usage = getattr(response, "usage", None)
    details = getattr(response, "incomplete_details", None)
    error = getattr(response, "error", None)
    return TurnFinished(
        response_id=response.id,
        status=response.status,
        incomplete_reason=getattr(details, "reason", None),
        error=getattr(error, "message", None),
        input_tokens=getattr(usage, "input_tokens", None),
        output_tokens=getattr(usage, "output_tokens", None),
    )
