"""Background runs: idempotent submit, followed and replayed streams, cancel."""

from __future__ import annotations

import report_client
from conftest import expected_output
from lgos_testkit import STARTUP_SECONDS, wait_until


def test_background_run_is_followed_replayed_and_another_cancelled(serve, capsys):
    server = serve("report_app")

    report_client.main(server.base_url)

    assert capsys.readouterr().out == expected_output("report_client.out")


def test_background_and_stream_together_stream_the_run_from_its_start(serve):
    client = serve("report_app").client()

    events = client.responses.create(
        model="report", input="Now", background=True, stream=True
    )
    types = [event.type for event in events]

    assert types[0] == "response.created"
    assert types[-1] == "response.completed"


def test_leaving_a_followed_stream_does_not_stop_the_run(serve):
    client = serve("report_app").client()
    job = client.responses.create(model="report", input="Go", background=True)

    with client.responses.retrieve(job.id, stream=True) as stream:
        next(iter(stream))
    wait_until(
        lambda: client.responses.retrieve(job.id).status == "completed",
        STARTUP_SECONDS,
        "the run left behind to complete",
    )
    job = client.responses.retrieve(job.id)

    assert job.output[-1].content[0].text == "Report ready: all steps done."
