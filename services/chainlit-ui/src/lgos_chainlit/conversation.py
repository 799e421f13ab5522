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
  ``Idempotency-Key``); the queued Response id is saved at once (the id the
  gateway returned), then ``background_runs`` follows the run to its end.
  ``cancel`` cancels the run; the follower then reports it.

This module is the state machine (send -> stream -> settle -> client calls
or interrupt); what a request sends is ``request_parts``, the commit rules
are ``settle``, and stream reading, the ledger, interrupts and files live in
their own modules.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from openai import APIConnectionError, APIStatusError, AsyncOpenAI, OpenAIError

from lgos_chainlit.background_runs import BackgroundRuns
from lgos_chainlit.catalog import GraphInfo
from lgos_chainlit.chats import BackgroundRun, ChatState, ChatStore
from lgos_chainlit.closing import owned
from lgos_chainlit.events import (
    InterruptAsked,
    Notice,
    StreamFinished,
    UIEvent,
)
from lgos_chainlit.files import FilesClient, FilesError
from lgos_chainlit.interrupts import AnswerError, explain_rejection, keeps_pending
from lgos_chainlit.ledger import Item, Ledger, user_message
from lgos_chainlit.request_parts import (
    Exchange,
    create_options,
    graph_settings,
    next_exchange,
)
from lgos_chainlit.runtime_settings import SettingField
from lgos_chainlit.settle import answer_client_calls, settle, turn_finished
from lgos_chainlit.stream import StreamError, read_stream

FILE_INPUTS = "file_inputs"
BACKGROUND = "background"
MAX_CLIENT_ROUNDS = 4


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file the user attached in the UI (already on local disk)."""

    path: Path
    name: str
    mime: str | None = None


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
        self.graph = graph
        self.state = state
        self.store = store
        self.files = files
        self.ledger = Ledger(state.items)
        self.runs = BackgroundRuns(client, follow_client, state, self.save)
        """Follows and cancels the chat's background runs (``follow_client``:
        by LGOS's id, see ``background_runs``)."""

    # ------------------------------------------------------------ chat settings

    @property
    def fields(self) -> list[SettingField]:
        """The graph's runtime settings (none when the extension is missing)."""
        return graph_settings(self.graph)

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
            if not self.runs.following:
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
        exchange = Exchange(
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
        if run is None or self.runs.following:
            return
        pending = self.state.pending if run.resuming else None
        exchange = Exchange(
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
        refused = await self.runs.cancel(run)
        if refused is not None:
            yield refused
            return
        if not self.runs.following:
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

    def _exchange(self, turn: list[Item]) -> Exchange:
        return next_exchange(self.ledger, self.state, self.graph, turn)

    async def _request(self, exchange: Exchange, *, background: bool = False) -> Any:
        try:
            return await self._create(exchange, background)
        except APIStatusError as exc:
            if exchange.replay is None or exc.status_code != 404:
                raise
        # The chained Response is gone (deleted, expired, a restarted memory
        # store): send the whole ledger, which starts a new chain.
        self.state.chain = None
        exchange.unchain()
        return await self._create(exchange, background)

    async def _create(self, exchange: Exchange, background: bool) -> Any:
        options = create_options(self.graph, self.state, self.files, exchange)
        if background:
            # Queued, not streamed: the Response id is known (and saved)
            # before any event, and a retried submit returns the same run.
            return await self.client.responses.create(
                background=True,
                extra_headers={"Idempotency-Key": f"lgos-ui-{uuid.uuid4().hex}"},
                **cast(Any, options),
            )
        return await self.client.responses.create(stream=True, **cast(Any, options))

    def _refused(self, exchange: Exchange, exc: Exception) -> list[UIEvent]:
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
        self, exchange: Exchange, attached: BackgroundRun | None = None
    ) -> AsyncGenerator[UIEvent, None]:
        for _ in range(MAX_CLIENT_ROUNDS + 1):
            if attached is not None:
                rounds = self.runs.follow(
                    attached, resuming=exchange.resuming is not None
                )
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
            yield turn_finished(response)
            settled = settle(
                exchange,
                response,
                self.ledger,
                self.state,
                stores_responses=self.graph.stores_responses,
            )
            self.save()  # a pause is saved before its question is shown
            for notice in settled.notices:
                yield notice
            if not settled.client_calls:
                for event in self._question():
                    yield event
                return
            outputs: list[Item] = []
            async with aclosing(
                answer_client_calls(settled.client_calls, self.files, outputs)
            ) as shown:
                async for event in shown:
                    yield event
            self.ledger.commit(outputs)
            self.save()
            # The client calls' outputs are in the ledger now: send them.
            exchange = self._exchange([])
        yield Notice("warning", "Stopped after too many client tool rounds.")

    def _broke_off(self, exchange: Exchange, exc: Exception) -> Notice:
        if exchange.resuming is not None:
            self.state.pending = None
            self.save()
        return Notice("error", f"The answer stream broke off: {exc}")

    async def _foreground(
        self, exchange: Exchange
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
        self, exchange: Exchange
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
        followed_run = self.runs.follow(
            run, resuming=exchange.resuming is not None, submitted=True
        )
        async with aclosing(followed_run) as followed:
            async for streamed in followed:
                yield streamed
