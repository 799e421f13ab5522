"""Starting the stack: each service has its own start budget, so a slow
machine that starts services one after another still starts them all, and
the one that hangs is named. The budget runs on the policy's clock, which
these tests move; the services are real one-shot processes that finish when
the test lets them."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from lgos_stack.restarts import RestartPolicy
from lgos_stack.supervisor import Service, StackError, Supervisor
from lgos_testkit import wait_until

BUDGET = 60.0
WAIT = 60.0


class Clock:
    """The policy's clock: moved by the test, counting its readers."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now

    def advance(self, seconds: float) -> None:
        """Move on, and return once the supervisor has read the new time (its
        loop reads the clock for each service not yet healthy)."""
        self.now += seconds
        seen = self.reads
        wait_until(lambda: self.reads > seen, WAIT, "the supervisor to look")


def gated(name: str, folder: Path, after: tuple[str, ...] = ()) -> Service:
    """A one-shot that says it started, then ends once the test lets it go
    (``let_go``): it blocks reading the FIFO ``go-<name>`` until the test's
    end of it closes."""
    os.mkfifo(folder / f"go-{name}")
    script = (
        "import pathlib\n"
        f"folder = pathlib.Path({str(folder)!r})\n"
        f"(folder / 'started-{name}').touch()\n"
        f"(folder / 'go-{name}').read_bytes()\n"
    )
    return Service(
        name=name,
        argv=[sys.executable, "-c", script],
        port=None,
        url="(one-shot)",
        oneshot=True,
        after=after,
    )


def let_go(name: str, folder: Path) -> None:
    """End the gated one-shot ``name`` (it has started: its FIFO is open or
    about to be; opening our end waits for it)."""
    with open(folder / f"go-{name}", "wb"):
        pass


class Starting:
    """``Supervisor.start`` running in a thread, with its outcome."""

    def __init__(self, supervisor: Supervisor) -> None:
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.supervisor = supervisor
        self.thread.start()

    def _run(self) -> None:
        try:
            self.supervisor.start()
        except BaseException as exc:  # reported to the test
            self.error = exc

    def result(self) -> BaseException | None:
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), "start() did not return"
        return self.error


@pytest.fixture
def clock() -> Clock:
    return Clock()


def supervisor_of(services: list[Service], tmp_path: Path, clock: Clock) -> Supervisor:
    return Supervisor(
        services,
        tmp_path / "logs",
        startup_timeout=BUDGET,
        policy=RestartPolicy(backoff=0, clock=clock),
    )


def test_services_started_one_after_another_may_take_longer_than_one_budget_in_all(
    tmp_path, clock
):
    first, second = gated("first", tmp_path), gated("second", tmp_path, ("first",))
    supervisor = supervisor_of([first, second], tmp_path, clock)
    try:
        starting = Starting(supervisor)
        wait_until((tmp_path / "started-first").exists, WAIT, "the first to start")
        clock.advance(0.9 * BUDGET)
        let_go("first", tmp_path)
        wait_until((tmp_path / "started-second").exists, WAIT, "the second to start")
        clock.advance(0.9 * BUDGET)  # 1.8 budgets since the stack began
        let_go("second", tmp_path)

        assert starting.result() is None
    finally:
        supervisor.stop()


def test_a_service_late_after_its_own_start_is_named_with_those_waiting_on_it(
    tmp_path, clock
):
    first, second = gated("first", tmp_path), gated("second", tmp_path, ("first",))
    supervisor = supervisor_of([first, second], tmp_path, clock)
    try:
        starting = Starting(supervisor)
        wait_until((tmp_path / "started-first").exists, WAIT, "the first to start")
        clock.advance(BUDGET + 1)

        error = starting.result()
    finally:
        supervisor.stop()

    assert isinstance(error, StackError)
    assert str(error).startswith(
        "not healthy 60 s after starting: first; waiting for them: second (not started)"
    )
