"""Chainlit rendering of UI events (the only module besides ``app.py`` that
imports Chainlit).

* commentary -> one "Progress" step per request, open (readable without a
  click), placed above the request's answer, each status streamed into it as
  its own line while the request runs;
* answer tokens -> one message per request, streamed; refusals marked;
* at the end of a request: sources, an incomplete/failed mark and the token
  usage in one small italic line under the answer;
* server tools -> tool steps with input and output;
* ``display_file`` -> an inline image or a file download;
* an interrupt -> its question with one button per choice (typing answers
  when free text is allowed); a clicked choice is written into the chat as
  the user's message;
* a background run -> a "running in the background" line (no id) with a
  Cancel button; when the run ends the button goes and the line says how it
  ended; a picked-up run's answer is replaced by the whole final text;
* notices -> error messages or plain ones.
"""

# Chainlit leaves many of its methods unannotated (send, update, ...).
# mypy: allow-untyped-calls

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import chainlit as cl
from chainlit.utils import utc_now

from lgos_chainlit.events import (
    AnswerDelta,
    AnswerReplaced,
    BackgroundEnded,
    BackgroundStarted,
    CitationAdded,
    CommentaryDelta,
    CommentaryDone,
    CommentaryStarted,
    FileShown,
    InterruptAsked,
    Notice,
    RefusalDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    UIEvent,
)
from lgos_chainlit.follower_tasks import Followers
from lgos_chainlit.presentation import (
    ended_line,
    escape_markdown,
    refusal_prefix,
    running_line,
    sources_markdown,
    status_text,
    usage_text,
)

INTERRUPT_ACTION = "lgos_interrupt"
CANCEL_ACTION = "lgos_cancel_background"
QUESTION_KEY = "lgos_question_message"
AUTHOR = "LGOS"
BUTTON_ID_PREFIX = "lgos-button-"
"""Ids of the UI's own actions; ``lgos.css`` draws them as real buttons."""


class TurnView:
    """Renders the events of one user action (possibly several requests)."""

    def __init__(self) -> None:
        self._answer: cl.Message | None = None
        self._refusing = False
        self._citations: list[CitationAdded] = []
        self._steps: dict[str, cl.Step] = {}
        self._running: cl.Message | None = None
        self._progress = _Progress()

    async def render(
        self, events: AsyncIterator[UIEvent], followers: Followers | None = None
    ) -> None:
        """Show ``events``; with ``followers``, hand them to a follower task
        once a background run is shown, so the calling handler returns and
        the run's Cancel button can be clicked (Chainlit disables buttons
        while a handler runs)."""
        try:
            async for event in events:
                await self.show(event)
                if followers is not None and isinstance(event, BackgroundStarted):
                    followers.start(self._carry_on(events))
                    return
        except BaseException as exc:
            # Stopped (or showing failed): this task ends the turn's streams
            # now; a background run goes on (and is picked up again).
            stopped = isinstance(exc, asyncio.CancelledError) and self._running is None
            with contextlib.suppress(Exception):
                await _close(events)
                await self._drop_cancel_button()
                await self._progress.end()
                if stopped:
                    await self._keep_stopped_answer()
            raise
        await self._drop_cancel_button()
        await self._finish_answer(None)

    async def _keep_stopped_answer(self) -> None:
        """A stopped answer stays as far as it came (saved in the history,
        so a reloaded page shows it stopped too)."""
        if self._answer is not None and self._answer.content:
            answer, self._answer = self._answer, None
            await answer.send()

    def on_screen(self) -> list[dict[str, Any]]:
        """What this turn shows now that the chat's history may lack (step
        dicts): the running progress step and the answer so far are saved
        only when they end."""
        shown: list[Any] = [self._progress.step, *self._steps.values(), self._answer]
        return [dict(item.to_dict()) for item in shown if item is not None]

    async def _carry_on(self, events: AsyncIterator[UIEvent]) -> None:
        """The rest of a turn whose background run is followed in a task (if
        the chat ends, the follower has saved the sequence it reached)."""
        await self.render(events)

    async def _drop_cancel_button(self) -> None:
        if self._running is not None:
            await self._running.remove_actions()
            self._running = None

    async def _message(self) -> cl.Message:
        if self._answer is None:
            self._answer = cl.Message(content="", author=AUTHOR)
        return self._answer

    async def show(self, event: UIEvent) -> None:
        if isinstance(event, CommentaryStarted):
            await self._progress.start_line(event.item_id)
        elif isinstance(event, CommentaryDelta):
            await self._progress.add(event.item_id, event.text)
        elif isinstance(event, CommentaryDone):
            await self._progress.finish_line(event.item_id, event.text)
        elif isinstance(event, AnswerDelta):
            await (await self._message()).stream_token(event.text)
        elif isinstance(event, RefusalDelta):
            message = await self._message()
            if not self._refusing:
                self._refusing = True
                await message.stream_token(refusal_prefix())
            await message.stream_token(event.text)
        elif isinstance(event, CitationAdded):
            self._citations.append(event)
        elif isinstance(event, ToolStarted):
            step = cl.Step(name=event.name, type="tool")
            self._steps[event.call_id] = step
            await step.send()
        elif isinstance(event, ToolFinished):
            step = self._steps.get(event.call_id) or cl.Step(
                name=event.name, type="tool"
            )
            self._steps.pop(event.call_id, None)
            step.input = event.input
            step.output = event.output or event.status
            await step.update()
        elif isinstance(event, TurnFinished):
            await self._finish_answer(event)
        elif isinstance(event, AnswerReplaced):
            (await self._message()).content = event.text
        elif isinstance(event, BackgroundStarted):
            self._running = await show_running(event)
        elif isinstance(event, BackgroundEnded):
            if self._running is not None:
                running, self._running = self._running, None
                await running.remove_actions()
                running.actions = []
                running.content = ended_line(event.status)
                await running.update()
        elif isinstance(event, FileShown):
            await show_file(event)
        elif isinstance(event, InterruptAsked):
            await ask(event)
        elif isinstance(event, Notice):
            await notify(event)

    async def _finish_answer(self, finished: TurnFinished | None) -> None:
        await self._progress.end()
        extras = [sources_markdown(self._citations)]
        if finished is not None:
            extras.append(status_text(finished))
            usage = usage_text(finished)
            extras.append(f"*{usage}*" if usage else "")
        extras = [extra for extra in extras if extra]
        message = self._answer
        unfinished = finished is not None and finished.status != "completed"
        if message is None and extras and (unfinished or self._citations):
            message = await self._message()
        if message is not None:
            if extras:
                body = message.content.rstrip()
                message.content = "\n\n".join([body, *extras] if body else extras)
            await message.send()
        self._answer = None
        self._refusing = False
        self._citations = []


class _Progress:
    """One request's commentary as a single open step above its answer.

    The step is created at the first status of a request, as a child of the
    handler's run like the answer message (Chainlit shows a run's children
    in the order they were sent, so it stays above the answer that follows),
    with a start time (shown as running until the request ends) and opened
    by default, so each status can be read without a click. Each commentary
    item is one paragraph of the step's text.
    """

    def __init__(self) -> None:
        self._step: cl.Step | None = None
        self._lines: dict[str, str] = {}

    @property
    def step(self) -> cl.Step | None:
        """The step while its request runs."""
        return self._step

    async def start_line(self, item_id: str) -> None:
        if self._step is None:
            current = cl.context.current_step
            self._step = cl.Step(
                name="Progress",
                type="run",
                parent_id=current.id if current is not None else None,
                default_open=True,
                show_input=False,
            )
            self._step.start = utc_now()
            await self._step.send()
        elif self._lines:
            await self._step.stream_token("\n\n")
        self._lines[item_id] = ""

    async def add(self, item_id: str, text: str) -> None:
        # A run picked up mid-way may stream into an item not started here.
        if self._step is not None and item_id in self._lines:
            self._lines[item_id] += text
            await self._step.stream_token(text)

    async def finish_line(self, item_id: str, text: str) -> None:
        if self._step is None or item_id not in self._lines:
            return
        if self._lines[item_id] != text:
            self._lines[item_id] = text
            self._step.output = "\n\n".join(self._lines.values())
            await self._step.update()

    async def end(self) -> None:
        """The request ended: the step stops running and stays open."""
        if self._step is None:
            return
        step, self._step = self._step, None
        self._lines = {}
        step.end = utc_now()
        await step.update()


async def _close(events: AsyncIterator[UIEvent]) -> None:
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()


async def show_running(event: BackgroundStarted) -> cl.Message:
    message = cl.Message(
        content=running_line(picked_up=event.picked_up),
        actions=[
            cl.Action(
                name=CANCEL_ACTION,
                payload={"response_id": event.response_id},
                label="Cancel",
                icon="circle-stop",
                id=_button_id(),
            )
        ],
        author=AUTHOR,
    )
    await message.send()
    return message


async def show_file(event: FileShown) -> None:
    shown = event.file
    element: cl.Element
    if shown.is_image:
        element = cl.Image(
            name=shown.filename,
            content=shown.content,
            mime=shown.mime,
            display="inline",
        )
    else:
        element = cl.File(
            name=shown.filename,
            content=shown.content,
            mime=shown.mime,
            display="inline",
        )
    caption = escape_markdown(shown.title or shown.filename)
    await cl.Message(content=caption, elements=[element], author=AUTHOR).send()


async def ask(event: InterruptAsked) -> None:
    prompt = event.prompt
    actions = [
        cl.Action(
            name=INTERRUPT_ACTION,
            payload={"call_id": prompt.call_id, "answer": choice},
            label=choice,
            id=_button_id(),
        )
        for choice in prompt.choices
    ]
    lines = [prompt.question]
    if prompt.free_text:
        lines.append(
            "*Type your answer*" if not prompt.choices else "*Or type your own answer.*"
        )
    if event.remaining > 1:
        lines.append(f"*{event.remaining} questions are waiting for an answer.*")
    message = cl.Message(content="\n\n".join(lines), actions=actions, author=AUTHOR)
    await message.send()
    cl.user_session.set(QUESTION_KEY, message)


def _button_id() -> str:
    return f"{BUTTON_ID_PREFIX}{uuid.uuid4().hex}"


async def record_choice(answer: str) -> None:
    """Write a choice made with a button into the chat, as the user's message
    (a typed answer is one already)."""
    user = cl.user_session.get("user")
    author = getattr(user, "display_name", None) or getattr(user, "identifier", "You")
    await cl.Message(content=answer, author=str(author), type="user_message").send()


async def clear_question() -> None:
    """Remove the buttons of the last question shown (it was answered)."""
    message = cl.user_session.get(QUESTION_KEY)
    if isinstance(message, cl.Message):
        cl.user_session.set(QUESTION_KEY, None)
        await message.remove_actions()


async def notify(event: Notice) -> None:
    if event.level == "error":
        await cl.ErrorMessage(content=event.text, author=AUTHOR).send()
    else:
        await cl.Message(content=event.text, author=AUTHOR).send()
