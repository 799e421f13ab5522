"""``lgos-bench outage`` end to end, shortened to its reset phase: a real
fleet (one ``lgos serve``, two ``lgos worker``) on a real PostgreSQL whose
connections are terminated under load.

No figure is asserted: what a loaded CI machine measures means nothing.
What must hold is what a user of the bench relies on: the phase is
reported, runs were accepted under load, the bench waited for every one of
them to end, and the JSON and markdown are written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def test_a_shortened_run_reports_the_reset_phase_and_waits_for_every_run(
    tmp_path: Path,
) -> None:
    env = {
        **os.environ,
        # Since 7e64541 the API's /health/ready stays 503 for about this long
        # after the connections are reset (the queue's check waits out the
        # queue's database wait; default 30 s, issue 45). The recovery waits
        # for readiness, so the wait is shortened to keep the test short.
        "LGOS_QUEUE_DATABASE_WAIT": "5",
    }
    command = [sys.executable, "-m", "lgos_bench", "outage", "--phases", "reset"]
    command += ["--steady", "2", "--recovery", "2", "--out", str(tmp_path)]
    # A hang guard under pytest's 300 s: the run takes about 40 s on 2 busy
    # cores; its own waits are bounded (recovery 120 s, settling 180 s).
    subprocess.run(command, check=True, env=env, timeout=280)

    (data,) = tmp_path.glob("*-outage.json")
    (markdown,) = tmp_path.glob("*-outage.md")
    results = json.loads(data.read_text())
    (phase,) = results["phases"]
    assert phase["phase"] == "reset"
    runs = phase["runs"]
    assert runs["accepted"] > 0
    assert runs["not_ended"] == 0
    assert results["not_ended"] == []
    ended = runs["completed"] + runs["failed"] + runs["cancelled"] + runs["other"]
    assert ended == runs["accepted"]
    assert phase["foreground"]["answers"] > 0
    assert phase["readiness"]["api"]["probes"] > 0
    assert phase["readiness"]["workers"]["probes"] > 0
    text = markdown.read_text()
    assert "| reset |" in text
    assert "## Readiness and recovery" in text
