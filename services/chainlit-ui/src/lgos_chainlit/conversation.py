"""One chat with one graph: requests, the ledger, client tools, interrupts.

``Conversation`` is everything the UI does between "the user sent something"
and "here is what to show", as an async stream of UI events, with no Chainlit
in it:

* ``send`` uploads attachments (graphs with ``file_inputs``), sends the ledger
  plus the new user message with the chat's metadata (``conversation_id``,
  changed ``lgos_settings``) and selected server tools, and streams the answer.
  On a deployment that keeps Responses (the model says ``stores_responses``)
  a turn instead names the last whole Response (``previous_response_id``)
  and sends only the ledger's items after it; if the server no longer has
  that Response, the turn replays the whole ledger.
* After a completed Response it answers ``display_file`` calls (download,
  ``FileShown``, ``function_call_output``) and sends the follow-up request.
* An ``lgos_interrupt`` pause is saved (Response id + exact calls) before the
  first ``InterruptAsked``; ``answer`` collects one answer per call and then
  resumes with ``previous_response_id`` and only the matching outputs.

* With the chat's "run in background" switch on (graphs with ``background``),
  each request is submitted with ``background=true`` (and an
  ``Idempotency-Key``); the queued Response id is saved at once, then the run
  is followed through ``GET /responses/{id}?stream=true&starting_after=N``
  on the follow client: through LiteLLM that is its pass-through route to
  LGOS, addressed with LGOS's id (``gateway_ids``), because LiteLLM cannot
  stream a retrieved Response; a gateway without that route (a 404 of its
  own) is polled through LiteLLM instead. The chat state keeps the id the
  gateway returned. ``run_follower.RunFollower`` reads that stream
  (reattaching, or polling); this module decides what a finished run means
  for the chat. ``cancel`` cancels the run; the follower then reports it.

The module stays one state machine (send -> stream -> settle -> client calls
or interrupt -> commit) because every path ends in the same commit rules;
stream reading, the ledger, interrupts and files live in their own modules.

Committing is per exchange: the user message and output items enter the ledger
(and the saved state) only when a Response completed or ended incomplete; a
failed, cancelled or refused request leaves the ledger as it was.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from openai import APIConnectionError, APIStatusError, AsyncOpenAI, OpenAIError

from lgos_chainlit.catalog import GraphInfo
from lgos_chainlit.chats import BackgroundRun, ChatState, ChatStore, ResponseChain
from lgos_chainlit.closing import owned
from lgos_chainlit.events import (
    AnswerReplaced,
    BackgroundEnded,
    BackgroundStarted,
    FileShown,
    InterruptAsked,
    Notice,
    StreamFinished,
    TurnFinished,
    UIEvent,
)
from lgos_chainlit.files import DISPLAY_FILE, DISPLAY_FILE_TOOL, FilesClient, FilesError
from lgos_chainlit.files import display_file as fetch_display_file
from lgos_chainlit.gateway_ids import upstream_response_id
from lgos_chainlit.interrupts import (
    AnswerError,
    PendingInterrupt,
    explain_rejection,
    is_interrupt,
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
from lgos_chainlit.run_follower import RouteMissing, RunEnded, RunFollower, RunLost
from lgos_chainlit.run_follower import reason as _reason
from lgos_chainlit.runtime_settings import (
    SettingField,
    changed_settings,
    encode_settings,
    request_metadata,
    setting_fields,
)
from lgos_chainlit.stream import StreamError, answer_text, read_stream

FILE_INPUTS = "file_inputs"
BACKGROUND = "background"
MAX_CLIENT_ROUNDS = 4
REATTACH_DELAYS = (0.2, 0.5, 1.0, 2.0, 4.0)
"""Pauses before reattaching to a background run's stream without progress."""
POLL_INTERVAL = 1.0
"""Seconds between snapshot reads when a run cannot be streamed."""
POLL_LIMIT = 3600.0
"""How long a run is polled before the UI stops waiting (it keeps running)."""


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
    replay: list[Item] | None = None
    """A chained request's whole-ledger input, sent instead when the server
    no longer has the Response it names."""


class Conversation:
    """A chat's requests to one graph, over the official SDK."""

    def __init__(
        self,
        client: AsyncOpenAI,
        graph: GraphInfo,
        state: ChatState,
        store: ChatStore,
        files: FilesClient | None = None,
        *,
        follow_client: AsyncOpenAI | None = None,
    ) -> None:
        self.client = client
        self.follow_client = follow_client
        """Follows and cancels background runs by LGOS's id (see the module);
        ``None``: the request client does, by the id it returned."""
        self.graph = graph
        self.state = state
        self.store = store
        self.files = files
        self.ledger = Ledger(state.items)
        self.following = False
        """This object is following the chat's background run right now."""
        self.poll_interval = POLL_INTERVAL
        self.poll_limit = POLL_LIMIT
        self.reattach_delays: Sequence[float] = REATTACH_DELAYS

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

    @property
    def offers_background(self) -> bool:
        """The graph runs requests in the background (the switch is shown)."""
        return not self.graph.limited and self.graph.supports(BACKGROUND)

    @property
    def in_background(self) -> bool:
        """Requests go in the background: offered and switched on."""
        return self.offers_background and self.state.background

    def save(self) -> None:
        self.state.items = self.ledger.items
        self.store.save(self.state)

    # ------------------------------------------------------------ public API

    async def send(
        self, text: str, attachments: Sequence[Attachment] = ()
    ) -> AsyncGenerator[UIEvent, None]:
        """A user turn: upload attachments, send, stream, follow client calls."""
        if self.state.running is not None:
            yield Notice(
                "warning",
                "A background run of this chat is still going: wait for it or "
                "cancel it.",
            )
            if not self.following:
                async with aclosing(self.follow_running()) as followed:
                    async for event in followed:
                        yield event
            return
        if self.state.pending is not None:
            yield Notice("warning", "Answer the pending question first.")
            for event in self._question():
                yield event
            return
        file_ids: list[str] = []
        if attachments:
            async with aclosing(self._upload(attachments, file_ids)) as uploads:
                async for event in uploads:
                    yield event
            if len(file_ids) != len(attachments) and self._accepts_files():
                return
        if not text and not file_ids:
            return
        turn = [user_message(text, file_ids)]
        exchange = self._exchange(turn)
        async with aclosing(self._run(exchange)) as turn_events:
            async for event in turn_events:
                yield event

    async def ask_pending(self) -> AsyncGenerator[UIEvent, None]:
        """The next unanswered question of a saved pause (after a reload)."""
        for event in self._question():
            yield event

    def _question(self) -> list[UIEvent]:
        pending = self.state.pending
        prompt = pending.next_prompt() if pending is not None else None
        if pending is None or prompt is None:
            return []
        remaining = len(pending.calls) - len(pending.answers)
        return [InterruptAsked(prompt=prompt, remaining=remaining)]

    async def answer(
        self, call_id: str, text: str, *, typed: bool = False
    ) -> AsyncGenerator[UIEvent, None]:
        """Answer one question; when all are answered, resume the run."""
        pending = self.state.pending
        if pending is None:
            yield Notice("warning", "There is no pending question to answer.")
            return
        try:
            pending.answer(call_id, text, typed=typed)
        except AnswerError as exc:
            yield Notice("warning", str(exc).capitalize() + ".")
            for event in self._question():
                yield event
            return
        self.save()
        if not pending.complete:
            for event in self._question():
                yield event
            return
        exchange = _Exchange(
            input=pending.outputs(),
            commit_first=pending.ledger_items(),
            previous_response_id=pending.response_id,
            resuming=pending,
        )
        async with aclosing(self._run(exchange)) as turn_events:
            async for event in turn_events:
                yield event

    async def follow_running(self) -> AsyncGenerator[UIEvent, None]:
        """Follow the saved background run again (after a reload or a stop),
        from the last sequence number seen, and settle it like any request."""
        run = self.state.running
        if run is None or self.following:
            return
        pending = self.state.pending if run.resuming else None
        exchange = _Exchange(
            input=[], commit_first=list(run.commit_first), resuming=pending
        )
        async with aclosing(self._run(exchange, attached=run)) as turn_events:
            async for event in turn_events:
                yield event

    async def cancel(self) -> AsyncGenerator[UIEvent, None]:
        """Cancel the background run; its follower reports the outcome (this
        call follows it itself when nothing else does)."""
        run = self.state.running
        if run is None:
            yield Notice("info", "No background run is in progress.")
            return
        client, run_id = self._follower()
        try:
            await client.responses.cancel(run_id(run.response_id))
        except (APIStatusError, APIConnectionError) as exc:
            yield Notice("error", f"The run could not be cancelled: {_reason(exc)}")
            return
        if not self.following:
            async with aclosing(self.follow_running()) as followed:
                async for event in followed:
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
    ) -> AsyncGenerator[UIEvent, None]:
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

    def _exchange(self, turn: list[Item]) -> _Exchange:
        """The next request for ``turn`` (committed with its output): on a
        deployment that keeps Responses, only what the chained Response does
        not cover, naming it; otherwise the whole ledger."""
        whole = self.ledger.request_input(turn)
        chain = self.state.chain
        if not self.graph.stores_responses or chain is None:
            return _Exchange(input=whole, commit_first=turn)
        return _Exchange(
            input=whole[chain.covered :],
            commit_first=turn,
            previous_response_id=chain.response_id,
            replay=whole,
        )

    async def _request(self, exchange: _Exchange, *, background: bool = False) -> Any:
        try:
            return await self._create(exchange, background)
        except APIStatusError as exc:
            if exchange.replay is None or exc.status_code != 404:
                raise
        # The chained Response is gone (deleted, expired, a restarted memory
        # store): send the whole ledger, which starts a new chain.
        self.state.chain = None
        exchange.input, exchange.replay = exchange.replay, None
        exchange.previous_response_id = None
        return await self._create(exchange, background)

    async def _create(self, exchange: _Exchange, background: bool) -> Any:
        options: dict[str, Any] = {
            "model": self.graph.model,
            "input": exchange.input,
            "metadata": self.metadata(),
            # A deployment that keeps Responses keeps these too, so the
            # next turn can name them instead of replaying the ledger.
            "store": self.graph.stores_responses,
        }
        tools = self.tools()
        if tools:
            options["tools"] = tools
        if exchange.previous_response_id is not None:
            options["previous_response_id"] = exchange.previous_response_id
        if background:
            # Queued, not streamed: the Response id is known (and saved)
            # before any event, and a retried submit returns the same run.
            return await self.client.responses.create(
                background=True,
                extra_headers={"Idempotency-Key": f"lgos-ui-{uuid.uuid4().hex}"},
                **cast(Any, options),
            )
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

    async def _run(
        self, exchange: _Exchange, attached: BackgroundRun | None = None
    ) -> AsyncGenerator[UIEvent, None]:
        for _ in range(MAX_CLIENT_ROUNDS + 1):
            if attached is not None:
                rounds = self._follow(attached, exchange)
                attached = None
            elif self.in_background:
                rounds = self._submit(exchange)
            else:
                rounds = self._foreground(exchange)
            response: Any = None
            async with aclosing(rounds) as streamed_events:
                async for streamed in streamed_events:
                    if isinstance(streamed, StreamFinished):
                        response = streamed.response
                    else:
                        yield streamed
            if response is None:
                return
            yield _finished(response)
            follow_up = self._settle(exchange, response)
            async with aclosing(follow_up.events) as follow_up_events:
                async for event in follow_up_events:
                    yield event
            if not follow_up.again:
                return
            # The client calls' outputs are in the ledger now: send them.
            exchange = self._exchange([])
        yield Notice("warning", "Stopped after too many client tool rounds.")

    def _broke_off(self, exchange: _Exchange, exc: Exception) -> Notice:
        if exchange.resuming is not None:
            self.state.pending = None
            self.save()
        return Notice("error", f"The answer stream broke off: {exc}")

    async def _foreground(
        self, exchange: _Exchange
    ) -> AsyncGenerator[UIEvent | StreamFinished, None]:
        """One streamed request; ends with ``StreamFinished`` unless it failed."""
        try:
            stream = await self._request(exchange)
        except (APIStatusError, APIConnectionError) as exc:
            for event in self._refused(exchange, exc):
                yield event
            return
        try:
            async with (
                owned(stream),
                aclosing(read_stream(stream)) as streamed_events,
            ):
                async for streamed in streamed_events:
                    yield streamed
        except (StreamError, OpenAIError) as exc:
            yield self._broke_off(exchange, exc)

    async def _submit(
        self, exchange: _Exchange
    ) -> AsyncGenerator[UIEvent | StreamFinished, None]:
        """Queue a background request, save its id, then follow it."""
        try:
            queued = await self._request(exchange, background=True)
        except (APIStatusError, APIConnectionError) as exc:
            for event in self._refused(exchange, exc):
                yield event
            return
        run = BackgroundRun(
            response_id=queued.id,
            commit_first=list(exchange.commit_first),
            resuming=exchange.resuming is not None,
        )
        self.state.running = run
        self.save()
        async with aclosing(self._follow(run, exchange, submitted=True)) as followed:
            async for streamed in followed:
                yield streamed

    async def _follow(
        self, run: BackgroundRun, exchange: _Exchange, *, submitted: bool = False
    ) -> AsyncGenerator[UIEvent | StreamFinished, None]:
        """Follow a background run to its terminal Response (see ``follow``).

        Giving up leaves ``state.running`` saved, so the run can be picked up
        later; ``_settle`` clears it together with the commit.
        """
        self.following = True
        try:
            yield BackgroundStarted(run.response_id, picked_up=not submitted)
            async with aclosing(self._followed(run)) as events:
                async for event in events:
                    if isinstance(event, RunLost):
                        yield self._lost(run, exchange)
                        return
                    if isinstance(event, RunEnded):
                        if event.replace_answer:
                            yield AnswerReplaced(answer_text(event.response))
                        # Cleared in memory; ``_settle`` saves it with the commit.
                        self.state.running = None
                        yield BackgroundEnded(
                            run.response_id, str(event.response.status)
                        )
                        yield StreamFinished(response=event.response)
                        return
                    yield event
        finally:
            self.following = False

    def _follower(self) -> tuple[AsyncOpenAI, Callable[[str], str]]:
        """The client that follows runs, and how it names a saved run."""
        if self.follow_client is None:
            return self.client, str
        return self.follow_client, upstream_response_id

    async def _followed(
        self, run: BackgroundRun
    ) -> AsyncGenerator[UIEvent | RunLost | RunEnded, None]:
        """The run's events from the follow client; from the request client
        (polled, through LiteLLM) when the gateway has no follow route."""
        while True:
            client, run_id = self._follower()
            follower = RunFollower(
                client,
                self.save,
                poll_interval=self.poll_interval,
                poll_limit=self.poll_limit,
                reattach_delays=self.reattach_delays,
                run_id=run_id,
            )
            async with aclosing(follower.follow(run)) as events:
                async for event in events:
                    if not isinstance(event, RouteMissing):
                        yield event
                    elif self.follow_client is not None:
                        self.follow_client = None  # for this chat from now on
                        break
                else:
                    return

    def _lost(self, run: BackgroundRun, exchange: _Exchange) -> Notice:
        self.state.running = None
        if exchange.resuming is not None:
            self.state.pending = None
        self.save()
        return Notice(
            "error",
            "The background run is unknown to the server; the conversation "
            "is unchanged.",
        )

    def _settle(self, exchange: _Exchange, response: Any) -> _FollowUp:
        """Commit a finished exchange and work out what comes next."""
        if exchange.resuming is not None:
            self.state.pending = None
        if response.status in ("failed", "cancelled"):
            self.save()
            return _FollowUp(_events([]))
        output = [item_json(item) for item in response.output]
        calls = function_calls(output)
        interrupts = [item for item in output if is_interrupt(item)]
        if interrupts or response.status != "completed":
            # Calls that will not be answered now must not enter the ledger.
            kept = [
                item
                for item in output
                if item.get("type") != "function_call" and not is_interrupt(item)
            ]
            self.ledger.commit([*exchange.commit_first, *kept])
            # The server's Response holds calls the ledger leaves out: the
            # next turn replays the ledger rather than continue it.
            self.state.chain = None
            events: list[UIEvent] = []
            if interrupts:
                self.state.pending = PendingInterrupt(
                    response_id=response.id, calls=interrupts
                )
                if any(not is_interrupt(call) for call in calls):
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
        if self.graph.stores_responses:
            self.state.chain = ResponseChain(response.id, len(self.ledger))
        self.save()
        if not calls:
            return _FollowUp(_events([]))
        return _FollowUp(self._client_calls(calls), again=True)

    async def _then_ask(self, events: list[UIEvent]) -> AsyncGenerator[UIEvent, None]:
        for event in [*events, *self._question()]:
            yield event

    async def _client_calls(self, calls: list[Item]) -> AsyncGenerator[UIEvent, None]:
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

    events: AsyncGenerator[UIEvent, None]
    again: bool = False


async def _events(events: list[UIEvent]) -> AsyncGenerator[UIEvent, None]:
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
