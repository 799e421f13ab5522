"""CPU per request measured in this process, the compared sides alternated.

Every side is a coroutine function doing one request (or one graph run).
A measurement is ``rounds`` rounds; in each round every side serves a small
batch of calls (by default one call, or one call per concurrent task) and is
charged the process CPU time (``time.process_time``: this process's threads
only) the batch took. The order flips every round (A B, B A, A B ...).

Why so fine-grained: on a shared machine the CPU time one request takes
moves with what the other cores run (caches, the host's sibling threads;
this 2-core VM measured the same request at 1.2 ms quiet and 3.4 ms beside
a dozen busy processes). Load changes over tens of milliseconds and more, so
two sides alternated request by request see the same machine, and the ratio
of their total CPU holds still while each side's own figure swings.

Reported: the ratio of B's total CPU to A's over all rounds, a 95% bootstrap
interval of it (rounds resampled), and the ratio within each tenth of the
run (blocks of consecutive rounds) as the spread from start to end.

Garbage: after the warm-up everything alive is frozen (``gc.freeze``) and
automatic collection is off; each batch ends with a ``gc.collect()`` inside
its measured time, so every side pays for collecting exactly the garbage it
left (a collection of nothing costs about 0.1 us). Left to itself the
collector falls in whichever batch crosses its threshold, and without the
freeze a full collection scans both apps and every library: single requests
then cost several times the usual and an A/A run of one app drifted by 5%.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import random
import statistics
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

Call = Callable[[], Awaitable[object]]

BOOTSTRAP_SAMPLES = 1000
BLOCKS = 10
WARMUP_CALLS = 20
"""Calls per side before the first round: lazy imports, caches, first paths."""


@dataclass(frozen=True, slots=True)
class Batches:
    """CPU and wall seconds per call of one side, one value per round."""

    cpu: tuple[float, ...]
    wall: tuple[float, ...]

    @property
    def cpu_ms(self) -> float:
        """Mean CPU ms per call over every round."""
        return 1000 * sum(self.cpu) / len(self.cpu)

    @property
    def wall_ms(self) -> float:
        return 1000 * sum(self.wall) / len(self.wall)


async def serve_batch(call: Call, size: int, concurrency: int) -> None:
    """``size`` calls, ``concurrency`` of them at a time."""
    if concurrency <= 1:
        for _ in range(size):
            await call()
        return
    left = size

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await call()

    async with asyncio.TaskGroup() as group:
        for _ in range(min(concurrency, size)):
            group.create_task(worker())


async def alternate(
    calls: Mapping[str, Call],
    *,
    rounds: int,
    batch: int = 1,
    concurrency: int = 1,
    warmup: int = WARMUP_CALLS,
) -> dict[str, Batches]:
    """``rounds`` batches of each call, the order flipped every round."""
    names = list(calls)
    for name in names:
        await serve_batch(calls[name], warmup, concurrency)
    cpu: dict[str, list[float]] = {name: [] for name in names}
    wall: dict[str, list[float]] = {name: [] for name in names}
    clock, cpu_clock = time.perf_counter, time.process_time
    collect, automatic = gc.collect, gc.isenabled()
    collect()
    gc.freeze()
    gc.disable()
    try:
        for round_ in range(rounds):
            for name in names if round_ % 2 == 0 else names[::-1]:
                cpu0, wall0 = cpu_clock(), clock()
                await serve_batch(calls[name], batch, concurrency)
                collect()
                wall[name].append((clock() - wall0) / batch)
                cpu[name].append((cpu_clock() - cpu0) / batch)
    finally:
        if automatic:
            gc.enable()
        gc.unfreeze()
    return {name: Batches(tuple(cpu[name]), tuple(wall[name])) for name in names}


def ratio_spread(
    numerator: Batches, denominator: Batches, seed: int = 0
) -> dict[str, float]:
    """CPU ``numerator / denominator`` over every round, a 95% bootstrap
    interval of it, and the median, min and max of the ratio per block."""
    b, a = numerator.cpu, denominator.cpu
    if len(a) != len(b) or not a:
        raise ValueError("both sides need the same, non-zero number of rounds")
    n = len(a)
    chooser = random.Random(seed)
    indices = range(n)
    resampled = []
    for _ in range(BOOTSTRAP_SAMPLES):
        picks = chooser.choices(indices, k=n)
        resampled.append(sum(b[i] for i in picks) / sum(a[i] for i in picks))
    resampled.sort()
    edges = [round(n * k / BLOCKS) for k in range(BLOCKS + 1)]
    blocks = [
        sum(b[lo:hi]) / sum(a[lo:hi]) for lo, hi in itertools.pairwise(edges) if hi > lo
    ]
    return {
        "rounds": float(n),
        "ratio": sum(b) / sum(a),
        "ci_low": resampled[int(0.025 * BOOTSTRAP_SAMPLES)],
        "ci_high": resampled[int(0.975 * BOOTSTRAP_SAMPLES) - 1],
        "blocks": float(len(blocks)),
        "block_median": statistics.median(blocks),
        "block_min": min(blocks),
        "block_max": max(blocks),
    }
