"""``lgos-bench outage`` end to end, its four phases shortened: a real fleet
(one ``lgos serve``, two ``lgos worker``) on a real PostgreSQL whose
connections are terminated, which refuses connections, stalls (SIGSTOP) and
restarts, under load.

No timing figure is asserted: what a loaded CI machine measures means
nothing. What must hold is what issue 45 promises and what a user of the
bench relies on: every phase is reported, runs were accepted under load and
every one ended ``completed`` (none failed because the database blinked),
no answer was a 500, no ``lgos`` process exited, and the JSON and markdown
are written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PHASES = ("reset", "refuse", "stall", "restart")


def test_through_every_fault_no_run_fails_and_no_answer_is_a_500(
    tmp_path: Path,
) -> None:
    command = [sys.executable, "-m", "lgos_bench", "outage"]
    command += ["--phases", ",".join(PHASES), "--fault-seconds", "3"]
    command += ["--steady", "2", "--recovery", "2", "--out", str(tmp_path)]
    # A hang guard under pytest's 300 s; the run's own waits are bounded
    # (recovery 120 s, settling 180 s).
    subprocess.run(command, check=True, env=os.environ, timeout=280)

    (data,) = tmp_path.glob("*-outage.json")
    (markdown,) = tmp_path.glob("*-outage.md")
    results = json.loads(data.read_text())
    assert [phase["phase"] for phase in results["phases"]] == list(PHASES)
    assert results["not_ended"] == []
    assert results["exits"] == []
    text = markdown.read_text()
    assert "## Readiness and recovery" in text
    for phase in results["phases"]:
        name, runs = phase["phase"], phase["runs"]
        assert runs["accepted"] > 0, name
        assert runs["completed"] == runs["accepted"], (name, runs)
        for requests in ("submissions", "foreground"):
            assert phase[requests]["answers"] > 0, (name, requests)
            assert phase[requests]["buckets"]["500"] == 0, (name, requests)
        assert phase["readiness"]["api"]["probes"] > 0, name
        assert phase["readiness"]["workers"]["probes"] > 0, name
        assert f"| {name} |" in text
