"""The fleet suite: three ``lgos serve`` and two ``lgos worker`` on one real
PostgreSQL, upgraded under load the way a team upgrades every week.

While background runs are submitted (each followed from another process
than the one that took it) and foreground streams flow, every API process
and then every worker is SIGTERMed and replaced in turn; three runs are
cancelled through another process. Then ten more runs start and one worker
is SIGKILLed for good. Once with the clients talking to the processes
directly, once behind Debian's HAProxy health-checking ``/health/ready``.

Asserted: every submission accepted (a refused connection retried elsewhere
counts as accepted), every Response terminal with its answer, every follower
at the terminal event with no sequence gap or repeat, no foreground stream
cut after its status line, cancels honoured, each stopping API not-ready
before its port closed, the SIGTERMed workers exiting cleanly, no node
executed twice except around the SIGKILL (at-least-once side effects: a node
whose effect was written but not yet checkpointed runs again), and the dead
worker's runs finished within 60 s of its death; behind the balancer, not
one request refused or failed.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from background_stack import Stack
from fleet import Fleet
from fleet_load import Followed, Routes, Tally, cancel, follow, foreground, submit
from lgos_testkit import wait_until, wait_while_progressing
from lgos_testkit.haproxy import Balancer, haproxy

pytestmark = pytest.mark.timeout(900)

logger = logging.getLogger(__name__)

ANSWER = " ".join(f"w{i}" for i in range(20))
"""What the ``fleet`` graph answers."""
MIN_RUNS = 30
MAX_RUNS = 60
SUBMIT_EVERY = 0.5
LOST_WORKER_RUNS = 10
FOREGROUND_CLIENTS = 4
CANCELS = 3
RECOVERY_BOUND = 60.0


@pytest.mark.parametrize("through", ["direct", "haproxy"])
def test_a_rolling_upgrade_and_a_lost_worker_lose_nothing(
    through, tmp_path, postgres_uri, bytecode_cache
):
    began = time.monotonic()
    stack = Stack(tmp_path, postgres_uri, bytecode_cache)
    fleet = Fleet(stack, tmp_path / "logs", api_count=3, worker_count=2)
    tally = Tally()
    runs: list[Followed] = []
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(stack.stop)
        fleet.start()
        if through == "haproxy":
            balancer = cleanup.enter_context(haproxy(tmp_path, fleet.api_ports))
            urls = [f"{balancer.url}/v1"]
        else:
            urls = [f"{root}/v1" for root in fleet.api_roots()]
        routes = Routes(urls, tally)
        cleanup.callback(routes.close)
        pool = ThreadPoolExecutor(max_workers=80)
        cleanup.callback(pool.shutdown, wait=False, cancel_futures=True)
        stop = threading.Event()
        cleanup.callback(stop.set)

        def launch(model: str) -> Followed:
            run = Followed(tag=uuid.uuid4().hex[:10], model=model)
            runs.append(run)
            pool.submit(_submit_and_follow, routes, run)
            return run

        def keep_submitting() -> None:
            # Runs go on arriving through the whole upgrade (at least
            # MIN_RUNS of them, however fast it is; at most MAX_RUNS).
            while len(runs) < MIN_RUNS + CANCELS or not stop.is_set():
                if len(runs) < MAX_RUNS + CANCELS:
                    launch("fleet")
                time.sleep(SUBMIT_EVERY)

        cancelled_runs = [launch("forever") for _ in range(CANCELS)]
        submitter = pool.submit(keep_submitting)
        streams = [
            pool.submit(foreground, routes, stop, "talk")
            for _ in range(FOREGROUND_CLIENTS)
        ]
        api_restarts = [fleet.restart_api(i) for i in range(fleet.api_count)]
        wait_until(
            lambda: all(r.response_id or r.error for r in cancelled_runs),
            120,
            "the runs to cancel to be submitted",
        )
        for run in cancelled_runs:
            cancel(routes, run)
        worker_stops = [fleet.restart_worker(i) for i in range(fleet.worker_count)]
        stop.set()
        submitter.result(timeout=300)
        for stream in streams:
            stream.result(timeout=300)
        _wait_ended(stack, runs, "every run of the upgrade")

        # One worker dies for good while it runs some of ten new runs.
        doomed = fleet.workers[-1].pid
        lost = [launch("fleet") for _ in range(LOST_WORKER_RUNS)]
        wait_until(
            lambda: any(_held_by(stack, run.tag, doomed) for run in lost),
            120,
            "the doomed worker to be running one",
        )
        fleet.kill_worker(fleet.worker_count - 1)
        killed_at = time.monotonic()
        _wait_ended(stack, runs, "every run after the lost worker")
        balanced = _balancer_figures(balancer) if through == "haproxy" else {}

    dead_workers_runs = [r for r in lost if _held_by(stack, r.tag, doomed)]
    recovered_after = max(r.ended_at - killed_at for r in dead_workers_runs)
    repeated = _nodes_done_twice(stack, [r for r in runs if r.model == "fleet"])
    logger.warning(  # the figures to report (pytest -o log_cli=true)
        "fleet suite %s: runs %d, requests %d of which refused %d (%d attempts), "
        "failed %d, foreground %d ok %d cut, "
        "re-attached %d, cancels %s, api restarts %s, worker stops %s s, "
        "dead worker's runs %d done %.1f s after its death, nodes repeated "
        "around the SIGKILL %d, balancer %s, wall %.0f s",
        through,
        len(runs),
        tally.requests,
        tally.refused_requests,
        tally.refused,
        len(tally.failed),
        tally.foreground_ok,
        len(tally.foreground_cut),
        tally.reattached,
        [r.terminal for r in cancelled_runs],
        [
            (
                round(r.not_ready_after, 2),
                round(r.closed_after, 2),
                round(r.exited_after, 2),
                round(r.ready_again_after, 2),
            )
            for r in api_restarts
        ],
        [round(seconds, 1) for seconds, _ in worker_stops],
        len(dead_workers_runs),
        recovered_after,
        len(repeated),
        balanced,
        time.monotonic() - began,
    )
    assert tally.failed == []
    assert [r.tag for r in runs if r.error or not r.response_id] == []
    assert tally.foreground_ok > 0
    assert tally.foreground_cut == []
    if through == "haproxy":
        assert tally.refused == 0
    assert all(r.not_ready_first for r in api_restarts), api_restarts
    assert [code for _, code in worker_stops] == [0] * fleet.worker_count
    assert [r.terminal for r in cancelled_runs] == ["cancelled"] * CANCELS
    fleet_runs = [r for r in runs if r.model == "fleet"]
    assert len(fleet_runs) >= MIN_RUNS + LOST_WORKER_RUNS
    assert [r.tag for r in fleet_runs if r.terminal != "completed"] == []
    assert [r.tag for r in fleet_runs if r.output_text != ANSWER] == []
    gaps = [r.tag for r in runs if r.sequence != list(range(len(r.sequence)))]
    assert gaps == []
    assert dead_workers_runs
    assert recovered_after <= RECOVERY_BOUND
    # A node ran twice only where the SIGKILL caught its effect written and
    # its checkpoint not: at-least-once, never on a stop.
    assert all(doomed in pids for pids in repeated.values()), repeated


def _submit_and_follow(routes: Routes, run: Followed) -> None:
    try:
        submit(routes, run)
    except Exception as error:
        run.error = repr(error)
        routes.tally.add("failed", f"submit {run.tag}: {error!r}")
        return
    follow(routes, run)


def _wait_ended(stack: Stack, runs: list[Followed], what: str) -> None:
    # A busy machine ends runs slowly: fail only when none ends for two
    # minutes, not when all take longer than some total.
    try:
        wait_while_progressing(
            lambda: sum(1 for r in runs if r.terminal or r.error),
            len(runs),
            120,
            what,
            interval=0.1,
        )
    except TimeoutError as stuck:
        left = [r for r in runs if not (r.terminal or r.error)]
        stored = {
            row[0]: row[1:]
            for row in stack.sql(
                "SELECT id, snapshot->>'status', attempts_started, "
                "attempts_handed_back FROM lgos_background_responses "
                "WHERE id = ANY(%s)",
                ([r.response_id for r in left],),
            )
        }
        raise AssertionError(
            f"{stuck}; followers left: "
            + "; ".join(
                f"{r.tag} {r.model} {r.response_id} taken by {r.taken_by}, "
                f"seen {len(r.sequence)} events, stored {stored.get(r.response_id)}"
                for r in left
            )
        ) from None


def _held_by(stack: Stack, tag: str, pid: int) -> bool:
    """Process ``pid`` began the run and did not finish it."""
    return any(stack.markers.glob(f"enter-*-{tag}-{pid}-*")) and not any(
        stack.markers.glob(f"done-answer-{tag}-{pid}-*")
    )


def _nodes_done_twice(stack: Stack, runs: list[Followed]) -> dict[str, set[int]]:
    """``tag/node`` of every node that completed more than once: the PIDs
    that completed it."""
    repeated = {}
    for run in runs:
        for node in ("prepare", "answer"):
            done = list(stack.markers.glob(f"done-{node}-{run.tag}-*"))
            if len(done) > 1:
                pids = {int(path.name.split("-")[3]) for path in done}
                repeated[f"{run.tag}/{node}"] = pids
    return repeated


def _balancer_figures(balancer: Balancer) -> dict[str, int]:
    servers = balancer.servers()
    return {
        "retries": sum(int(row["wretr"] or 0) for row in servers),
        "redispatches": sum(int(row["wredis"] or 0) for row in servers),
    }
