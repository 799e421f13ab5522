"""``pid_alive`` has one meaning everywhere (a zombie counts as gone), and a
child armed with ``signalled_when_parent_dies`` outlives no killed parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from lgos_stack.processes import pid_alive, signal_pid


def test_a_running_process_is_alive_and_a_zombie_counts_as_gone():
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        assert pid_alive(child.pid)
        assert child.stdin is not None
        child.stdin.close()  # it exits on end of input
        # Wait for the exit without reaping it: the child stays a zombie.
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        os.kill(child.pid, 0)  # the PID still exists...

        assert not pid_alive(child.pid)  # ...but it runs no more
    finally:
        child.kill()
        child.wait()

    assert not pid_alive(child.pid)


_PARKED_CHILD = """
import os, signal, sys
def stopped(number, frame):
    print(signal.Signals(number).name, flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, stopped)
print(os.getpid(), flush=True)
signal.pause()
"""

_PARENT = f"""
import signal, subprocess, sys
from lgos_stack.processes import signalled_when_parent_dies
subprocess.Popen(
    [sys.executable, "-c", {_PARKED_CHILD!r}],
    preexec_fn=signalled_when_parent_dies(signal.SIGTERM),
)
sys.stdin.read()
"""


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux's")
def test_a_child_is_signalled_when_its_parent_is_killed():
    with subprocess.Popen(
        [sys.executable, "-c", _PARENT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as parent:
        assert parent.stdout is not None
        child_pid = int(parent.stdout.readline())  # its handler is in place
        try:
            parent.kill()  # no cleanup of its own: only the kernel tells the child
            # The child shares the pipe: end of output means it has exited too.
            said, _ = parent.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            pytest.fail("the child still runs after its parent was killed")
        finally:
            signal_pid(child_pid, signal.SIGKILL)

    assert said.split() == ["SIGTERM"]
