"""``lgos-bench inprocess``: CPU per request of two or three apps in this
process, alternated round by round, with the spread of their ratio.

A side is ``baseline`` (the hand-written app), ``baseline-usage`` (the same
app counting usage over every model call with LangChain's usage handler, as
LGOS does: the same-work baseline), ``lgos`` (LGOS as the socket bench
serves it) or ``lgos:LGOS_NAME=value[,LGOS_NAME=value...]``: LGOS built with
those settings in its environment, as ``lgos serve`` would read them.
``--compare A B`` reports B against A; ``--reference R`` also reports B
against R, R and B alternated on their own after A and B. The default is ``--compare
baseline-usage lgos --reference baseline``: LGOS judged against the
same-work baseline, the plain one beside it. Two LGOS sides compare
configurations (metrics off against on, the response store off against
on). Each request is handed straight to the app's ASGI callable, as
httpx's ASGITransport does, without the client's own cost, so the figure is
the app's: no socket, no load generator, no uvicorn.
``alternate.py`` says how rounds and the spread are measured.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AsyncExitStack, ExitStack, contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from langgraph_openai_serve.settings import Settings

from lgos_bench.alternate import Batches, Call, alternate, ratio_spread
from lgos_bench.inprocess import APPS, call_app
from lgos_bench.procstat import machine_busy_seconds
from lgos_bench.report import RESULTS_DIR, fmt, write_pair
from lgos_bench.scenarios import APIS, Api, target
from lgos_bench.suite import run_meta, run_preamble
from lgos_bench.targets import pair_limit
from lgos_bench.workload import DEFAULT_TOKENS, Workload

Log = Callable[[str], None]

ROUNDS = 1000
"""Alternations per scenario; each side serves ``concurrency`` requests in each."""
QUICK_ROUNDS = 40
DEFAULT_SIDES = ("baseline", "baseline-usage", "lgos")
"""The plain baseline (reference), the same-work baseline (A) and LGOS (B)."""
DEFAULT_KEYS = tuple(
    f"{api}/{mode}/plain" for api in APIS for mode in ("json", "stream")
)
_SETTING = re.compile(r"(LGOS|OTEL)_[A-Z0-9_]+")
_NEXT_SETTING = re.compile(r",(?=(?:LGOS|OTEL)_[A-Z0-9_]+=)")
"""``OTEL_*`` variables are the OpenTelemetry SDK's (tracing on, where to)."""


@dataclass(frozen=True, slots=True)
class Side:
    """One of the two apps compared, and the settings it is built with."""

    app: str
    env: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        if not self.env:
            return self.app
        return self.app + ":" + ",".join(f"{k}={v}" for k, v in self.env)

    @classmethod
    def parse(cls, text: str) -> Side:
        """``baseline``, ``baseline-usage``, ``lgos`` or
        ``lgos:LGOS_A=x,LGOS_B=y``."""
        app, _, settings = text.partition(":")
        if app not in APPS:
            raise ValueError(
                f"{text!r}: a side is 'baseline', 'baseline-usage', 'lgos' "
                "or 'lgos:...'"
            )
        pairs = []
        for item in _NEXT_SETTING.split(settings) if settings else []:
            name, equals, value = item.partition("=")
            if app != "lgos":
                raise ValueError(f"{text!r}: the baseline takes no settings")
            field = name.removeprefix("LGOS_")
            if not equals or not _SETTING.fullmatch(name):
                raise ValueError(
                    f"{item!r}: expected LGOS_NAME=value or OTEL_NAME=value"
                )
            if name.startswith("LGOS_") and field not in Settings.model_fields:
                raise ValueError(f"{name} is not an LGOS setting (settings.py)")
            pairs.append((name, value))
        return cls(app, tuple(pairs))

    def with_default(self, name: str, value: str) -> Side:
        """This side with ``name`` set unless it sets it (LGOS sides only)."""
        if self.app != "lgos" or any(key == name for key, _ in self.env):
            return self
        return replace(self, env=(*self.env, (name, value)))


@contextmanager
def environment(pairs: tuple[tuple[str, str], ...]) -> Iterator[None]:
    """``pairs`` in ``os.environ`` for the block, then as they were."""
    saved = {name: os.environ.get(name) for name, _ in pairs}
    os.environ.update(pairs)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@dataclass(frozen=True, slots=True)
class Plan:
    keys: tuple[str, ...] = DEFAULT_KEYS
    rounds: int = ROUNDS
    concurrency: int = 1
    tokens: int = DEFAULT_TOKENS


def parse_key(key: str) -> tuple[Api, bool, str]:
    """``chat/json/plain`` -> (API, streamed, model id)."""
    try:
        api, mode, model = key.split("/")
    except ValueError:
        api = mode = model = ""
    if api not in APIS or mode not in ("json", "stream") or not model:
        raise ValueError(f"{key!r}: expected chat|responses/json|stream/MODEL")
    return (
        ("chat" if api == "chat" else "responses"),
        mode == "stream",
        f"bench-{model}",
    )


async def started(side: Side, workload: Workload, stack: AsyncExitStack) -> FastAPI:
    """``side``'s app, built and started with its settings in the environment
    (settings are read when the app is built and when it starts); ``stack``
    stops it."""
    with environment(side.env):
        app = APPS[side.app](workload)
        await stack.enter_async_context(app.router.lifespan_context(app))
    return app


def parse_sides(texts: tuple[str, ...]) -> tuple[Side, ...]:
    """``A B`` or ``R A B``: two sides, or a reference and two sides."""
    if len(texts) not in (2, 3):
        raise ValueError("two sides (A B) or a reference and two (R A B)")
    return tuple(Side.parse(text) for text in texts)


async def alternate_pairs(calls: Mapping[str, Call], plan: Plan) -> dict[str, Batches]:
    """A and B (``calls["a"]``, ``calls["b"]``) alternated alone, then, with a
    reference, R and B alternated alone: ``a``, ``b``, and ``r`` with ``rb``,
    B's calls of the second alternation.

    Why not all three in the same rounds: a side runs faster after one that
    shares its code, which has left that code in the caches. The plain
    baseline shares nearly all of the same-work baseline's, so with it as a
    third side LGOS read 1.041x and 1.055x of the same-work baseline for a
    non-streamed Response, against 1.032x and 1.033x with the two alone; with
    a second LGOS as the third side, 1.009x and 0.997x."""
    rounds = partial(
        alternate,
        rounds=plan.rounds,
        batch=plan.concurrency,
        concurrency=plan.concurrency,
    )
    measured = await rounds({"a": calls["a"], "b": calls["b"]})
    if "r" in calls:
        against_reference = await rounds({"r": calls["r"], "b": calls["b"]})
        measured["r"], measured["rb"] = against_reference["r"], against_reference["b"]
    return measured


async def _measure(
    sides: tuple[Side, ...], plan: Plan, log: Log
) -> list[dict[str, Any]]:
    workload = Workload(tokens=plan.tokens)
    names = "rab"[-len(sides) :]  # the reference, if any, then A and B
    rows = []
    async with AsyncExitStack() as stack:
        apps = [await started(side, workload, stack) for side in sides]
        for key in plan.keys:
            api, stream, model = parse_key(key)
            request = target(api, model, stream=stream)
            calls = {
                name: partial(call_app, app, request)
                for name, app in zip(names, apps, strict=True)
            }
            busy0, own0, wall0 = (
                machine_busy_seconds(),
                time.process_time(),
                time.monotonic(),
            )
            measured = await alternate_pairs(calls, plan)
            own = time.process_time() - own0
            wall = time.monotonic() - wall0
            other = max(0.0, machine_busy_seconds() - busy0 - own) / wall
            spread = ratio_spread(measured["b"], measured["a"])
            row: dict[str, Any] = {
                "key": key,
                "stream": stream,
                "a_cpu_ms": measured["a"].cpu_ms,
                "b_cpu_ms": measured["b"].cpu_ms,
                "ratio": spread,
                "other_cores_busy": other,
                "seconds": wall,
            }
            if "r" in measured:
                row["reference"] = {
                    "cpu_ms": measured["r"].cpu_ms,
                    "ratio": ratio_spread(measured["rb"], measured["r"]),
                }
            log(_progress(row))
            rows.append(row)
    return rows


def _progress(row: dict[str, Any]) -> str:
    ratio = row["ratio"]
    reference = ""
    if "reference" in row:
        against = row["reference"]["ratio"]
        reference = (
            f"; R {row['reference']['cpu_ms']:.3f}, B/R {against['ratio']:.3f} "
            f"(95% CI {against['ci_low']:.3f}-{against['ci_high']:.3f})"
        )
    return (
        f"  {row['key']:24} CPU ms/req A {row['a_cpu_ms']:.3f} "
        f"B {row['b_cpu_ms']:.3f}  B/A {ratio['ratio']:.3f} "
        f"(95% CI {ratio['ci_low']:.3f}-{ratio['ci_high']:.3f}, blocks "
        f"{ratio['block_min']:.3f}-{ratio['block_max']:.3f}){reference}; "
        f"other processes {row['other_cores_busy']:.2f} cores"
    )


def run(
    sides: tuple[Side, ...],
    plan: Plan,
    log: Log,
    *,
    postgres: bool = False,
    limit: float | None = None,
) -> dict[str, Any]:
    """Both sides on every scenario of ``plan``; ``postgres`` starts a
    throwaway PostgreSQL (``lgos db-setup``) for the LGOS sides. The last
    side is B, the one before it A, a third (first) one the reference."""
    meta = run_meta(
        "inprocess",
        a=sides[-2].label,
        b=sides[-1].label,
        reference=sides[0].label if len(sides) == 3 else None,
        rounds=plan.rounds,
        concurrency=plan.concurrency,
        tokens=plan.tokens,
        postgres=postgres,
        cores=sorted(os.sched_getaffinity(0)),
    )
    with ExitStack() as stack:
        if postgres:
            from lgos_bench.fleet import postgres_database

            folder = stack.enter_context(
                tempfile.TemporaryDirectory(prefix="lgos-bench-")
            )
            database = stack.enter_context(postgres_database(Path(folder), log))
            url = database.url
            sides = tuple(side.with_default("LGOS_DATABASE_URL", url) for side in sides)
        reference = f"R = {meta['reference']}, " if meta["reference"] else ""
        log(
            f"{reference}A = {meta['a']}, B = {meta['b']}: {plan.rounds} rounds "
            f"of {plan.concurrency} concurrent request(s) per side"
        )
        rows = asyncio.run(_measure(sides, plan, log))
    return {"meta": meta, "rows": rows, "targets": targets(meta, rows, limit)}


def targets(
    meta: dict[str, Any], rows: list[dict[str, Any]], limit: float | None
) -> list[dict[str, Any]]:
    """``limit`` on every row when given; else the bound an issue puts on
    B against A (``targets.pair_limit``): LGOS against the same-work
    baseline, 1.05x non-streamed and 1.0x streamed; against the plain
    baseline alone, 1.10x non-streamed; kept Responses against the store off
    at concurrency 8, 1.10x non-streamed and 1.05x streamed."""
    judged: list[tuple[dict[str, Any], float]] = []
    for row in rows:
        bound = limit
        if bound is None:
            bound = pair_limit(
                meta["a"],
                meta["b"],
                stream=row["stream"],
                concurrency=meta["concurrency"],
            )
        if bound is not None:
            judged.append((row, bound))
    return [
        {
            "scenario": row["key"],
            "limit": bound,
            "value": row["ratio"]["ratio"],
            "met": row["ratio"]["ratio"] <= bound,
        }
        for row, bound in judged
    ]


def render(results: dict[str, Any]) -> str:
    meta = results["meta"]
    reference = meta.get("reference")
    title = f"# lgos-bench inprocess: B = `{meta['b']}` against A = `{meta['a']}`"
    if reference:
        title += f" and R = `{reference}`"
    header = (
        "| scenario | A CPU ms/req | B CPU ms/req | B/A | 95% CI | "
        "tenths of the run: min–max |"
    )
    rule = "|---|---|---|---|---|---|"
    if reference:
        header += " R CPU ms/req | B/R | 95% CI |"
        rule += "---|---|---|"
    lines = [
        title,
        "",
        run_preamble(meta)
        + f" {meta['rounds']} rounds of {meta['concurrency']} concurrent "
        "request(s) per side, the order flipped every round"
        + ("; A and B alternated on their own, then R and B" if reference else "")
        + "; CPU "
        "is this process's (`time.process_time`), each request handed straight "
        "to the app's ASGI callable (no socket, no client). "
        f"{meta['tokens']} tokens per answer; cores {meta['cores']}"
        + ("; a throwaway PostgreSQL for LGOS." if meta["postgres"] else "."),
        "",
        header + " other processes, cores busy |",
        rule + "---|",
    ]
    for row in results["rows"]:
        ratio = row["ratio"]
        cells = [
            row["key"],
            fmt(row["a_cpu_ms"], 3),
            fmt(row["b_cpu_ms"], 3),
            f"{ratio['ratio']:.3f}×",
            f"{ratio['ci_low']:.3f}–{ratio['ci_high']:.3f}",
            f"{ratio['block_min']:.3f}–{ratio['block_max']:.3f}",
        ]
        if reference:
            against = row["reference"]["ratio"]
            cells += [
                fmt(row["reference"]["cpu_ms"], 3),
                f"{against['ratio']:.3f}×",
                f"{against['ci_low']:.3f}–{against['ci_high']:.3f}",
            ]
        cells.append(fmt(row["other_cores_busy"], 2))
        lines.append("| " + " | ".join(cells) + " |")
    if results["targets"]:
        lines += ["", "| target | limit | value | met |", "|---|---|---|---|"]
        for item in results["targets"]:
            lines.append(
                f"| {item['scenario']}: CPU/request B/A | <= {item['limit']}x | "
                f"{item['value']:.3f} | {fmt(item['met'])} |"
            )
    return "\n".join(lines)


def write(results: dict[str, Any], directory: Path = RESULTS_DIR) -> tuple[Path, Path]:
    """``<timestamp>-inprocess.md`` and ``.json`` in ``directory``."""
    return write_pair(results, render(results), directory)
