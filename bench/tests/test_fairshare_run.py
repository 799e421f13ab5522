"""``lgos-bench fairshare`` end to end, every phase shortened: one ``lgos
serve`` and one ``lgos worker`` (4 slots) on a real PostgreSQL, SeaweedFS
and the Files API, three tenants with keys of their own.

No timing figure is asserted: what a loaded CI machine measures means
nothing. What must hold whatever the machine's speed is what issue 46
promises and what a user of the bench relies on: every batch and every
background Response of every tenant completed, the small batch created
beside the large one ended first, the requests a burst over
``LGOS_MAX_RUNS`` had refused were answered ``503 server_overloaded`` with
``Retry-After`` (and none failed otherwise), no ``lgos`` process exited,
and the report judges every target.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SHORT = {
    # Long enough that C's batch, created 3 lines in, could end after it
    # (12 lines on 4 slots ended before C's began).
    "--lines": "40",
    "--small-lines": "2",
    "--samples": "2",
    "--every": "0.5",
    "--wait-seconds": "0.5",
    "--burst-rounds": "1",
}


def _batches(results: dict[str, Any]) -> list[dict[str, Any]]:
    found = [b for part in results["waits"].values() for b in part["batches"]]
    found += [results["small"]["alone"], *results["small"]["beside"].values()]
    beside = results["bulk"]["beside"]
    return [*found, results["bulk"]["alone"], beside["bulk"], beside["small"]]


def test_tenants_work_all_completes_small_batch_first_and_overload_is_503(
    tmp_path: Path,
) -> None:
    command = [sys.executable, "-m", "lgos_bench", "fairshare", "--out", str(tmp_path)]
    command += [part for option in SHORT.items() for part in option]
    # A hang guard under pytest's 300 s; the bench's own waits are bounded.
    subprocess.run(command, check=True, env=os.environ, timeout=280)

    (data,) = tmp_path.glob("*-fairshare.json")
    (markdown,) = tmp_path.glob("*-fairshare.md")
    results = json.loads(data.read_text())
    assert results["exits"] == []

    batches = _batches(results)
    assert len(batches) == 9
    for batch in batches:
        counts = batch["request_counts"]
        assert batch["status"] == "completed", batch
        assert counts["completed"] == counts["total"] == batch["lines"], batch

    runs = [part["interactive"] for part in results["waits"].values()]
    runs.append(results["bulk"]["beside"]["interactive"])
    for part in runs:
        assert part["submitted"] > 0
        assert part["statuses"] == {"completed": part["submitted"]}, part

    for phase in ("small", "bulk"):
        beside = results[phase]["beside"]
        assert beside["small"]["ended_s"] < beside["bulk"]["ended_s"], phase

    unloaded, loaded = results["burst"]["unloaded"], results["burst"]["loaded"]
    assert unloaded["accepted"] == unloaded["requests"]
    assert loaded["refused"] > 0
    assert loaded["accepted"] + loaded["refused"] == loaded["requests"]
    assert loaded["refused_by"] == {"503 server_overloaded": loaded["refused"]}
    assert loaded["refused_without_retry_after"] == 0

    assert len(results["targets"]) == 6
    assert all(target["met"] is not None for target in results["targets"])
    assert "## Targets (issue 46)" in markdown.read_text()
