"""``lgos-bench``: run the benchmark, or profile one scenario.

lgos-bench                 full run (a few minutes)
lgos-bench --quick         one concurrency, few requests (under a minute)
lgos-bench --profile       full run, then py-spy where LGOS missed a target
lgos-bench profile responses/stream/plain/c8
lgos-bench inprocess       CPU per request in process: LGOS, the same-work
                           baseline and the plain one alternated
lgos-bench inprocess --compare lgos:LGOS_X=a lgos:LGOS_X=b   two LGOS settings
lgos-bench layers          a non-streamed request's CPU in process, split into the
                           graph run and the rest, LGOS and the same-work baseline
lgos-bench instructions    instructions per request under callgrind: the plain
                           baseline, the same-work baseline and LGOS
lgos-bench handlers        what counting usage costs the graph alone, by how the
                           handler is attached (callgrind)
lgos-bench idle            memory per idle open stream, baseline and LGOS
lgos-bench background      submit-to-first-event latency of background Responses
lgos-bench store           server CPU per request with the response store off and on
lgos-bench batches         a 10,000-line batch: lines/s with 1 and 2 workers, memory
lgos-bench scale           background runs/s with 1, 2, 4 workers; queue wait;
                           foreground req/s with 1 and 2 API processes (unpinned)
lgos-bench outage          what clients see while PostgreSQL resets, refuses,
                           stalls and restarts under load (unpinned)
lgos-bench fairshare       tenants sharing a fleet: a tenant's background waits
                           beside another's batches, a small batch beside a
                           large one, an admission burst (unpinned)
lgos-bench growth          each operation on an empty and a grown database
                           (a million kept Responses ...), then the retention
                           sweep beside submits (in process, unpinned)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from lgos_bench import (
    background,
    batches,
    compare,
    fairshare,
    growth,
    handlers,
    idle_report,
    layers,
    outage,
    report,
    scale,
    scale_report,
    store,
)
from lgos_bench.cli_args import GROWTH, build_parser
from lgos_bench.fleet import postgres_database
from lgos_bench.instructions import ALL_SCENARIOS, count_all
from lgos_bench.instructions import markdown as instructions_markdown
from lgos_bench.instructions import write as write_instructions
from lgos_bench.procstat import available_cores
from lgos_bench.profile import compare_markdown, profile_server
from lgos_bench.scenarios import FULL, QUICK, Api, Plan, Scenario
from lgos_bench.servers import Placement
from lgos_bench.suite import RunConfig, run_suite
from lgos_bench.workload import PLAIN, Workload

PROFILE_SECONDS = 8.0
INSTRUCTION_REQUESTS = 200
HANDLER_RUNS = 40


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _plan(args: argparse.Namespace) -> Plan:
    plan = QUICK if args.quick else FULL
    changes: dict[str, Any] = {}
    if args.requests:
        changes["requests"] = args.requests
    if args.seconds:
        changes["seconds"] = args.seconds
    if args.idle_streams:
        changes["idle_streams"] = args.idle_streams
    return dataclasses.replace(plan, **changes)


def parse_key(key: str, plan: Plan) -> Scenario:
    """``api/stream|json/model/cN`` -> a scenario."""
    api, mode, model, concurrency = key.split("/")
    if api not in ("chat", "responses") or mode not in ("stream", "json"):
        raise SystemExit(f"bad scenario {key!r}: expected api/stream|json/model/cN")
    api_name: Api = "chat" if api == "chat" else "responses"
    c = int(concurrency.removeprefix("c"))
    return Scenario(
        api_name, mode == "stream", f"bench-{model}", c, 10**6, plan.seconds
    )


def profile_pair(key: str, config: RunConfig) -> dict[str, Any]:
    scenario = parse_key(key, config.plan)
    measured = {
        kind: profile_server(
            kind, scenario, config.workload, config.placement, PROFILE_SECONDS
        )
        for kind in ("lgos", "baseline")
    }
    return {
        "scenario": key,
        "lgos": measured["lgos"],
        "baseline": measured["baseline"],
        "markdown": compare_markdown(measured["lgos"], measured["baseline"]),
    }


def _instructions(args: argparse.Namespace, keys: list[str]) -> int:
    requests = args.requests or INSTRUCTION_REQUESTS
    say(
        f"callgrind: {requests} in-process requests per side and scenario, "
        f"{args.concurrency} at a time"
    )
    try:
        scenarios = [compare.parse_key(key) for key in keys]
        sides = compare.parse_sides(tuple(args.compare)) if args.compare else None
    except ValueError as exc:
        raise SystemExit(f"lgos-bench instructions: {exc}") from None
    if any(model != PLAIN for _, _, model in scenarios):
        raise SystemExit("lgos-bench instructions: only the plain graph is counted")
    chosen = tuple((api, stream) for api, stream, _ in scenarios)
    with ExitStack() as stack:
        url = None
        if args.postgres:
            folder = stack.enter_context(
                tempfile.TemporaryDirectory(prefix="lgos-bench-")
            )
            url = stack.enter_context(postgres_database(Path(folder), say)).url
        try:
            counts = count_all(
                requests,
                say,
                chosen or ALL_SCENARIOS,
                sides=sides,
                concurrency=args.concurrency,
                database_url=url,
            )
        except RuntimeError as exc:
            raise SystemExit(f"lgos-bench instructions: {exc}") from None
    markdown, data = write_instructions(
        counts, postgres=args.postgres, directory=args.out
    )
    say("\n" + instructions_markdown(counts))
    say(f"wrote {markdown} and {data}")
    return 0


def _handlers(runs: int, out: Path) -> int:
    say(f"callgrind: {runs} runs of the plain graph per way and mode")
    try:
        table = handlers.count_all(runs, say)
    except RuntimeError as exc:
        raise SystemExit(f"lgos-bench handlers: {exc}") from None
    markdown, data = handlers.write(table, runs, out)
    say("\n" + handlers.markdown(table))
    say(f"wrote {markdown} and {data}")
    return 0


def _batches(lines: int, out: Path) -> int:
    return _show(batches, batches.run(lines, say), out)


def _background(args: argparse.Namespace) -> int:
    results = background.run(
        args.requests or background.DEFAULT_REQUESTS,
        say,
        rate=args.rate,
        apis=args.apis,
        workers=args.workers,
    )
    return _show(background, results, args.out)


def _scale(args: argparse.Namespace) -> int:
    results = scale.run(
        say,
        waves=3 if args.quick else scale.WAVES,
        queue_seconds=args.seconds or (10.0 if args.quick else scale.QUEUE_SECONDS),
        foreground_seconds=args.seconds
        or (4.0 if args.quick else scale.FOREGROUND_SECONDS),
    )
    return _show(scale_report, results, args.out)


def _phases(args: argparse.Namespace, default: tuple[str, ...]) -> tuple[str, ...]:
    if args.phases is None:
        return default
    return tuple(name for name in args.phases.split(",") if name)


def _outage(args: argparse.Namespace) -> int:
    try:
        plan = outage.Plan(
            phases=_phases(args, outage.PHASES),
            steady_s=args.steady,
            fault_s=args.fault_seconds,
            recovery_s=args.recovery,
        )
    except ValueError as exc:
        raise SystemExit(f"lgos-bench outage: {exc}") from None
    results = outage.run(say, plan, python=args.lgos_python, logs=args.logs)
    return _show(outage, results, args.out)


def _fairshare(args: argparse.Namespace) -> int:
    try:
        plan = fairshare.Plan(
            phases=_phases(args, fairshare.PHASES),
            lines=args.lines,
            small_lines=args.small_lines,
            samples=args.samples,
            every=args.every,
            wait_s=args.wait_seconds,
            burst_rounds=args.burst_rounds,
        )
    except ValueError as exc:
        raise SystemExit(f"lgos-bench fairshare: {exc}") from None
    results = fairshare.run(say, plan, python=args.lgos_python, logs=args.logs)
    return _show(fairshare, results, args.out)


def _growth(args: argparse.Namespace) -> int:
    try:
        sizes = dataclasses.replace(
            GROWTH.sizes,
            responses=args.responses,
            tenants=args.tenants,
            conversations=args.conversations,
            jobs=args.jobs,
            batches=args.batches,
        )
        plan = growth.Plan(
            sizes=sizes,
            tries=args.tries,
            sweep=not args.no_sweep,
            alone_s=args.steady,
        )
    except ValueError as exc:
        raise SystemExit(f"lgos-bench growth: {exc}") from None
    results = growth.run(say, plan, logs=args.logs)
    return _show(growth, results, args.out)


def _show(report: Any, results: Any, out: Path) -> int:
    """Write a mode's results (Markdown and JSON) and show its table."""
    markdown, data = report.write(results, out)
    say("\n" + report.render(results))
    say(f"wrote {markdown} and {data}")
    return 0


def _single_mode(report: Any, config: RunConfig, out: Path, **options: Any) -> int:
    """Run one report module's mode (``store``, ``idle``), write and show it."""
    say(f"placement: {config.placement.describe()}")
    results = report.run(config.placement, config.workload, say, **options)
    return _show(report, results, out)


def _inprocess(args: argparse.Namespace, keys: list[str]) -> int:
    try:
        if args.compare is None:
            texts: tuple[str, ...] = compare.DEFAULT_SIDES
            if args.reference is not None:
                raise ValueError("--reference needs --compare A B")
        else:
            texts = (*((args.reference,) if args.reference else ()), *args.compare)
        sides = compare.parse_sides(texts)
        for key in keys:
            compare.parse_key(key)
    except ValueError as exc:
        raise SystemExit(f"lgos-bench inprocess: {exc}") from None
    plan = compare.Plan(
        keys=tuple(keys) or compare.DEFAULT_KEYS,
        rounds=args.rounds or (compare.QUICK_ROUNDS if args.quick else compare.ROUNDS),
        concurrency=args.concurrency,
        tokens=args.tokens,
    )
    results = compare.run(sides, plan, say, postgres=args.postgres, limit=args.limit)
    return _show(compare, results, args.out)


def main(argv: list[str] | None = None) -> int:
    args = build_parser(__doc__ or "").parse_intermixed_args(argv)
    if args.scenario[:1] == ["inprocess"]:
        # Unpinned: both sides run in this process, on whichever core is free.
        return _inprocess(args, args.scenario[1:])
    if args.scenario[:1] == ["layers"]:
        rounds = args.rounds or (layers.QUICK_ROUNDS if args.quick else layers.ROUNDS)
        return _show(
            layers, layers.run(say, rounds=rounds, tokens=args.tokens), args.out
        )
    if args.scenario[:1] == ["scale"]:
        # Unpinned: a fleet's processes share the machine's cores.
        return _scale(args)
    if args.scenario[:1] == ["outage"]:
        return _outage(args)
    if args.scenario[:1] == ["fairshare"]:
        return _fairshare(args)
    if args.scenario[:1] == ["growth"]:
        # Unpinned: this process and PostgreSQL share the machine's cores.
        return _growth(args)
    placement = Placement.split(available_cores())
    # The load generator (this process) stays on its own core from here on.
    os.sched_setaffinity(0, placement.load_cores)
    config = RunConfig(
        plan=_plan(args),
        workload=Workload(tokens=args.tokens),
        placement=placement,
        mode="quick" if args.quick else "full",
    )
    if args.scenario[:1] == ["instructions"]:
        return _instructions(args, args.scenario[1:])
    if args.scenario[:1] == ["handlers"]:
        return _handlers(args.requests or HANDLER_RUNS, args.out)
    if args.scenario[:1] == ["idle"]:
        return _single_mode(
            idle_report,
            config,
            args.out,
            streams=args.idle_streams or idle_report.STREAMS,
        )
    if args.scenario[:1] == ["store"]:
        return _single_mode(
            store, config, args.out, seconds=args.seconds or store.SECONDS
        )
    if args.scenario[:1] == ["batches"]:
        return _batches(args.requests or batches.DEFAULT_LINES, args.out)
    if args.scenario[:1] == ["background"]:
        return _background(args)
    if args.scenario:
        if args.scenario[0] != "profile" or len(args.scenario) < 2:
            raise SystemExit("usage: lgos-bench profile KEY [KEY...]")
        say(f"placement: {placement.describe()}")
        for key in args.scenario[1:]:
            say(profile_pair(key, config)["markdown"] + "\n")
        return 0
    began = time.monotonic()
    results = run_suite(config, say)
    if args.profile:
        missed = [
            t["scenario"]
            for t in results["targets"]
            if t["met"] is False and t["kind"] == "cpu"
        ]
        results["profiles"] = [profile_pair(key, config) for key in missed]
    results["meta"]["wall_seconds"] = time.monotonic() - began
    markdown, data = report.write(results, args.out)
    say(report.render(results))
    say(f"wrote {markdown} and {data}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
