"""The supervisor keeps a crashed child running, alone, and gives up loudly.

Real child processes (``python -m http.server``) killed by PID; the
supervisor's ``tend`` is driven by the test, the back-off and its clock are
injected, so nothing sleeps.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from lgos_stack.net import free_ports, http_ok
from lgos_stack.processes import pid_alive
from lgos_stack.restarts import CrashHistory, RestartPolicy
from lgos_stack.supervisor import Service, State, Supervisor
from lgos_testkit import wait_until

WAIT = 30.0


def web(name: str, port: int) -> Service:
    return Service(
        name=name,
        argv=[sys.executable, "-m", "http.server", str(port), "--bind=127.0.0.1"],
        port=port,
        url=f"http://127.0.0.1:{port}",
        health_url=f"http://127.0.0.1:{port}/",
    )


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def news() -> list[str]:
    return []


def started(
    tmp_path: Path, news: list[str], policy: RestartPolicy
) -> Iterator[Supervisor]:
    ports = free_ports(2)
    supervisor = Supervisor(
        [web("api", ports[0]), web("other", ports[1])],
        tmp_path / "logs",
        startup_timeout=WAIT,
        policy=policy,
        say=news.append,
    )
    try:
        supervisor.start()
        yield supervisor
    finally:
        supervisor.stop()


def tend_until(supervisor: Supervisor, name: str, state: State, restarts: int) -> None:
    with httpx.Client(timeout=2) as http:

        def reached() -> bool:
            supervisor.tend(http)
            child = supervisor.find(name)
            return child.state is state and child.restarts == restarts

        wait_until(reached, WAIT, f"{name} {state} after {restarts} restarts")


def test_a_killed_service_comes_back_alone_and_is_given_up_on_after_repeated_crashes(
    tmp_path, news
):
    policy = RestartPolicy(backoff=0, max_restarts=1, window=3600)
    for supervisor in started(tmp_path, news, policy):
        other = supervisor.find("other").process.pid
        first = supervisor.find("api").process.pid

        os.kill(first, signal.SIGKILL)
        tend_until(supervisor, "api", State.RUNNING, restarts=1)
        second = supervisor.find("api").process.pid
        back_up = http_ok(supervisor.find("api").service.health_url)

        os.kill(second, signal.SIGTERM)
        tend_until(supervisor, "api", State.FAILED, restarts=1)

        assert back_up
        assert second != first
        assert not pid_alive(second)
        assert supervisor.find("other").process.pid == other
        assert supervisor.find("other").state is State.RUNNING
        assert http_ok(supervisor.find("other").service.health_url)
        assert news[0] == "api exited with code -9; restarting it in 0 s"
        assert news[1] == "api is back up (restart 1)"
        assert news[2].startswith("api FAILED: it exited 2 times within 3600 s")
        assert "`just restart api`" in news[2]
        log = (tmp_path / "logs" / "api.log").read_text()
        assert "--- lgos-demo-stack: api starting again (after its crash) ---" in log
        assert "api gave up after too many crashes" in log

        # A person's restart brings a failed service back, its crashes forgotten.
        supervisor.restart("api")
        assert supervisor.find("api").state is State.RUNNING
        assert supervisor.find("api").restarts == 2
        assert supervisor.find("api").history.times == []


def test_a_crashed_service_waits_out_its_back_off_on_the_policy_s_clock(tmp_path, news):
    clock = Clock()
    policy = RestartPolicy(backoff=5, max_restarts=3, window=3600, clock=clock)
    for supervisor in started(tmp_path, news, policy):
        dead = supervisor.find("api").process.pid
        os.kill(dead, signal.SIGKILL)
        # The crash is noticed: now the restart is due at the clock's +5 s.
        tend_until(supervisor, "api", State.RESTARTING, restarts=0)
        with httpx.Client(timeout=2) as http:
            clock.now += 4.9
            supervisor.tend(http)
            waiting = supervisor.find("api").state
            clock.now += 0.1
            supervisor.tend(http)

        assert waiting is State.RESTARTING
        assert supervisor.find("api").restarts == 1
        assert supervisor.find("api").process.pid != dead
        tend_until(supervisor, "api", State.RUNNING, restarts=1)


def test_the_back_off_doubles_up_to_its_cap_and_old_crashes_leave_the_window():
    clock = Clock()
    history = CrashHistory(
        RestartPolicy(backoff=1, backoff_max=4, max_restarts=4, window=60, clock=clock)
    )

    delays = []
    for _ in range(4):
        delays.append(history.record())
        clock.now += 1
    gave_up = history.record()
    clock.now += 61
    after_a_quiet_minute = history.record()

    assert delays == [1, 2, 4, 4]
    assert gave_up is None
    assert after_a_quiet_minute == 1


def test_a_restart_policy_that_cannot_work_is_refused():
    with pytest.raises(ValueError, match="backoff <= backoff_max"):
        RestartPolicy(backoff=10, backoff_max=1)
    with pytest.raises(ValueError, match="window > 0"):
        RestartPolicy(window=0)
