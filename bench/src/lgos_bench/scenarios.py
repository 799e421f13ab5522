"""Scenarios: which request, at which concurrency, and how many of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lgos_bench.load import Target
from lgos_bench.workload import (
    CITED,
    PLAIN,
    STATUS,
    TOOL,
    chat_body,
    responses_body,
)

Api = Literal["chat", "responses"]
APIS: tuple[Api, ...] = ("chat", "responses")
VARIANTS = (STATUS, CITED, TOOL)
"""Graphs measured beside the plain one, at the target concurrency."""
TARGET_CONCURRENCY = 8


def target(api: Api, model: str, *, stream: bool) -> Target:
    if api == "chat":
        return Target(
            path="/chat/completions",
            body=chat_body(model, stream=stream),
            stream=stream,
            delta_marker=b'"delta":{"content":',
            done_marker=b"data: [DONE]" if stream else b'"object":"chat.completion"',
        )
    return Target(
        path="/responses",
        body=responses_body(model, stream=stream),
        stream=stream,
        delta_marker=b"event: response.output_text.delta\n",
        done_marker=(
            b"event: response.completed" if stream else b'"status":"completed"'
        ),
    )


@dataclass(frozen=True, slots=True)
class Scenario:
    api: Api
    stream: bool
    model: str
    concurrency: int
    max_requests: int
    max_seconds: float

    @property
    def key(self) -> str:
        mode = "stream" if self.stream else "json"
        return (
            f"{self.api}/{mode}/{self.model.removeprefix('bench-')}/c{self.concurrency}"
        )

    @property
    def target(self) -> Target:
        return target(self.api, self.model, stream=self.stream)


@dataclass(frozen=True, slots=True)
class Plan:
    """How much of everything one run does."""

    concurrencies: tuple[int, ...]
    requests: int
    """Requests per scenario at concurrency 1; scaled up with concurrency."""
    seconds: float
    """Time bound per scenario (split over the rounds)."""
    rounds: int
    """Alternating baseline/LGOS rounds each scenario is split into."""
    variant_seconds: float
    """Time bound per variant scenario."""
    variant_apis: tuple[Api, ...]
    variant_streams: tuple[bool, ...]
    worker_concurrency: int
    idle_apis: tuple[Api, ...]
    idle_streams: int
    inprocess_runs: int

    def requests_at(self, concurrency: int) -> int:
        return self.requests * (1 if concurrency == 1 else 2)

    def main(self) -> list[Scenario]:
        """Plain graph: both APIs, streaming and not, every concurrency."""
        return [
            Scenario(api, stream, PLAIN, c, self.requests_at(c), self.seconds)
            for c in self.concurrencies
            for api in APIS
            for stream in (True, False)
        ]

    def variants(self) -> list[Scenario]:
        c = TARGET_CONCURRENCY
        return [
            Scenario(api, stream, model, c, self.requests_at(c), self.variant_seconds)
            for model in VARIANTS
            for api in self.variant_apis
            for stream in self.variant_streams
        ]

    def workers(self) -> list[Scenario]:
        c = self.worker_concurrency
        return [
            Scenario(api, stream, PLAIN, c, self.requests_at(c), self.seconds)
            for api in APIS
            for stream in (True, False)
        ]


FULL = Plan(
    concurrencies=(1, 8, 32),
    requests=400,
    seconds=4.0,
    rounds=3,
    variant_seconds=2.5,
    variant_apis=APIS,
    variant_streams=(True, False),
    worker_concurrency=TARGET_CONCURRENCY,
    idle_apis=APIS,
    idle_streams=256,
    inprocess_runs=600,
)
QUICK = Plan(
    concurrencies=(TARGET_CONCURRENCY,),
    requests=30,
    seconds=1.0,
    rounds=1,
    variant_seconds=1.0,
    variant_apis=("responses",),
    variant_streams=(True,),
    worker_concurrency=TARGET_CONCURRENCY,
    idle_apis=("chat",),
    idle_streams=32,
    inprocess_runs=20,
)
