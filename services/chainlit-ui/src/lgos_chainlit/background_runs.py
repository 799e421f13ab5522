"""Following and cancelling a chat's background run.

A queued Response is followed through ``GET /responses/{id}?stream=true&
starting_after=N`` on the follow client: through LiteLLM that is its
pass-through route to LGOS, addressed with LGOS's id (``gateway_ids``),
because LiteLLM cannot stream a retrieved Response. A gateway without that
route (a 404 of its own) is polled through the request client instead, for
the rest of the chat. ``run_follower.RunFollower`` reads one run's events
(reattaching, or polling); ``BackgroundRuns`` turns them into the chat's
events and keeps ``state.running`` in step.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing

from openai import APIConnectionError, APIStatusError, AsyncOpenAI

from lgos_chainlit.chats import BackgroundRun, ChatState
from lgos_chainlit.events import (
    AnswerReplaced,
    BackgroundEnded,
    BackgroundStarted,
    Notice,
    StreamFinished,
    UIEvent,
)
from lgos_chainlit.gateway_ids import upstream_response_id
from lgos_chainlit.run_follower import (
    RouteMissing,
    RunEnded,
    RunFollower,
    RunLost,
    reason,
)
from lgos_chainlit.stream import answer_text

REATTACH_DELAYS = (0.2, 0.5, 1.0, 2.0, 4.0)
"""Pauses before reattaching to a background run's stream without progress."""
POLL_INTERVAL = 1.0
"""Seconds between snapshot reads when a run cannot be streamed."""
POLL_LIMIT = 3600.0
"""How long a run is polled before the UI stops waiting (it keeps running)."""


class BackgroundRuns:
    """Follows and cancels the background runs of one chat."""

    def __init__(
        self,
        client: AsyncOpenAI,
        follow_client: AsyncOpenAI | None,
        state: ChatState,
        save: Callable[[], None],
    ) -> None:
        self.client = client
        self.follow_client = follow_client
        """Follows and cancels runs by LGOS's id; ``None``: the request
        client does, by the id it returned."""
        self.state = state
        self.save = save
        self.following = False
        """A run of this chat is being followed right now."""
        self.poll_interval = POLL_INTERVAL
        self.poll_limit = POLL_LIMIT
        self.reattach_delays: Sequence[float] = REATTACH_DELAYS

    async def cancel(self, run: BackgroundRun) -> Notice | None:
        """Ask the server to cancel ``run``; a notice when it could not."""
        client, run_id = self._follower()
        try:
            await client.responses.cancel(run_id(run.response_id))
        except (APIStatusError, APIConnectionError) as exc:
            return Notice("error", f"The run could not be cancelled: {reason(exc)}")
        return None

    async def follow(
        self, run: BackgroundRun, *, resuming: bool, submitted: bool = False
    ) -> AsyncGenerator[UIEvent | StreamFinished, None]:
        """Follow ``run`` to its terminal Response (``StreamFinished``).

        Giving up leaves ``state.running`` saved, so the run can be picked up
        later; the end clears it in memory, and settling the exchange saves
        that with the commit. A run the server does not know ends the wait
        (and a resume's pause) with a notice.
        """
        self.following = True
        try:
            yield BackgroundStarted(run.response_id, picked_up=not submitted)
            async with aclosing(self._followed(run)) as events:
                async for event in events:
                    if isinstance(event, RunLost):
                        yield self._lost(resuming)
                        return
                    if isinstance(event, RunEnded):
                        if event.replace_answer:
                            yield AnswerReplaced(answer_text(event.response))
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

    def _lost(self, resuming: bool) -> Notice:
        self.state.running = None
        if resuming:
            self.state.pending = None
        self.save()
        return Notice(
            "error",
            "The background run is unknown to the server; the conversation "
            "is unchanged.",
        )
