"""``pid_alive`` has one meaning everywhere: a zombie counts as gone."""

from __future__ import annotations

import os
import subprocess
import sys

from lgos_stack.processes import pid_alive


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
