"""The command line of ``lgos-bench``: its modes and options."""

from __future__ import annotations

import argparse
from pathlib import Path

from lgos_bench import background, fairshare, growth, outage, report
from lgos_bench.workload import DEFAULT_TOKENS

FAIRSHARE = fairshare.Plan()
"""lgos-bench fairshare's defaults."""
GROWTH = growth.Plan()
"""lgos-bench growth's defaults."""


def build_parser(usage: str) -> argparse.ArgumentParser:
    """The parser; ``usage`` is the command's help text (its first line the summary)."""
    parser = argparse.ArgumentParser(
        prog="lgos-bench", description=usage.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="a run under a minute")
    parser.add_argument("--tokens", type=int, default=DEFAULT_TOKENS)
    parser.add_argument("--requests", type=int, help="requests per scenario at c=1")
    parser.add_argument("--seconds", type=float, help="time bound per scenario")
    parser.add_argument("--idle-streams", type=int, help="K for the idle-stream memory")
    parser.add_argument("--out", type=Path, default=report.RESULTS_DIR)
    parser.add_argument(
        "--profile",
        action="store_true",
        help="profile LGOS and the baseline with py-spy where a CPU target is missed",
    )
    inprocess = parser.add_argument_group(
        "lgos-bench inprocess, layers and instructions"
    )
    inprocess.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="the two sides, B reported against A: baseline, baseline-usage, "
        "lgos or lgos:LGOS_NAME=value[,LGOS_NAME=value] (default: "
        "baseline-usage lgos, with --reference baseline)",
    )
    inprocess.add_argument(
        "--reference",
        metavar="R",
        help="a third side, alternated with B after A and B; B also "
        "reported against it",
    )
    inprocess.add_argument("--rounds", type=int, help="alternated rounds")
    inprocess.add_argument(
        "--concurrency",
        type=int,
        default=1,
        help="requests each side serves at once per round (default 1)",
    )
    inprocess.add_argument(
        "--limit", type=float, help="judge every scenario's B/A against this"
    )
    inprocess.add_argument(
        "--postgres",
        action="store_true",
        help="a throwaway PostgreSQL for LGOS (LGOS_DATABASE_URL)",
    )
    fleet = parser.add_argument_group("lgos-bench background")
    fleet.add_argument(
        "--rate",
        type=float,
        default=background.DEFAULT_RATE,
        help="submissions per second (default 10)",
    )
    fleet.add_argument(
        "--apis", type=int, default=background.DEFAULT_APIS, help="lgos serve processes"
    )
    fleet.add_argument(
        "--workers",
        type=int,
        default=background.DEFAULT_WORKERS,
        help="lgos worker processes",
    )
    faults = parser.add_argument_group(
        "lgos-bench outage (--phases, --lgos-python, --logs: fairshare too)"
    )
    faults.add_argument(
        "--phases",
        help="the phases, in order (outage: reset,refuse,stall,restart; "
        "fairshare: waits,small,bulk,burst; the default is all of them)",
    )
    faults.add_argument(
        "--steady",
        type=float,
        default=outage.STEADY_SECONDS,
        help="seconds of load before each fault (default 10)",
    )
    faults.add_argument(
        "--fault-seconds",
        type=float,
        default=outage.FAULT_SECONDS,
        help="how long the database refuses or stalls (default 15)",
    )
    faults.add_argument(
        "--recovery",
        type=float,
        default=outage.RECOVERY_SECONDS,
        help="seconds of load after each fault, at least (default 20)",
    )
    faults.add_argument(
        "--lgos-python",
        metavar="PATH",
        help="run the lgos processes with this interpreter (another "
        "checkout's .venv/bin/python with lgos-bench installed)",
    )
    faults.add_argument(
        "--logs",
        type=Path,
        metavar="DIR",
        help="keep the fleet's and PostgreSQL's logs in DIR",
    )
    tenants = parser.add_argument_group("lgos-bench fairshare")
    tenants.add_argument(
        "--lines", type=int, default=FAIRSHARE.lines, help="A's batch (120)"
    )
    tenants.add_argument(
        "--small-lines",
        type=int,
        default=FAIRSHARE.small_lines,
        help="C's batch (4)",
    )
    tenants.add_argument(
        "--samples",
        type=int,
        default=FAIRSHARE.samples,
        help="B's background runs per part of the waits phase (10)",
    )
    tenants.add_argument(
        "--every",
        type=float,
        default=FAIRSHARE.every,
        help="seconds between two of B's submissions (1.5)",
    )
    tenants.add_argument(
        "--wait-seconds",
        type=float,
        default=FAIRSHARE.wait_s,
        help="a run's and a batch line's model call (1.0)",
    )
    tenants.add_argument(
        "--burst-rounds",
        type=int,
        default=FAIRSHARE.burst_rounds,
        help="unloaded and over-the-limit bursts, each (10)",
    )
    grown = parser.add_argument_group(
        "lgos-bench growth (--steady: seconds of submits before the sweep)"
    )
    grown.add_argument(
        "--responses",
        type=int,
        default=GROWTH.sizes.responses,
        help="kept Responses (1000000)",
    )
    grown.add_argument(
        "--tenants", type=int, default=GROWTH.sizes.tenants, help="tenants (8)"
    )
    grown.add_argument(
        "--conversations",
        type=int,
        default=GROWTH.sizes.conversations,
        help="Conversations of 200 items (10000)",
    )
    grown.add_argument(
        "--jobs", type=int, default=GROWTH.sizes.jobs, help="waiting jobs (100000)"
    )
    grown.add_argument(
        "--batches", type=int, default=GROWTH.sizes.batches, help="batches (10000)"
    )
    grown.add_argument(
        "--tries",
        type=int,
        default=GROWTH.tries,
        help="tries of each operation on each database (300)",
    )
    grown.add_argument(
        "--no-sweep", action="store_true", help="leave the retention sweep out"
    )
    parser.add_argument(
        "scenario",
        nargs="*",
        help="'profile KEY...' profiles scenarios (e.g. responses/stream/plain/c8)",
    )
    return parser
