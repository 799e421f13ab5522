"""The Batch API on the demo stack as ``just up`` starts it: a JSONL file
uploaded to the stack's Files API with the demo's files key, a batch created
on the demo API without any other setting, run by the background worker,
its results read back with the same key."""

from __future__ import annotations

import json

from lgos_testkit import wait_for_batch

QUESTIONS = ["What is LGOS?", "Who are you?"]


def test_a_batch_runs_out_of_the_box_and_its_results_are_the_uploaders(api, files):
    lines = [
        {
            "custom_id": f"q{i}",
            "method": "POST",
            "url": "/v1/responses",
            "body": {"model": "simple", "input": question},
        }
        for i, question in enumerate(QUESTIONS)
    ]
    upload = "".join(json.dumps(line) + "\n" for line in lines).encode()
    input_file = files.files.create(file=("questions.jsonl", upload), purpose="batch")

    batch = api.batches.create(
        input_file_id=input_file.id,
        endpoint="/v1/responses",
        completion_window="24h",
    )
    done = wait_for_batch(api, batch.id)

    assert done.status == "completed", done.errors
    assert done.request_counts is not None
    assert done.request_counts.completed == len(QUESTIONS)
    assert done.error_file_id is None
    output = [
        json.loads(line)
        for line in files.files.content(done.output_file_id or "").text.splitlines()
    ]
    assert [line["custom_id"] for line in output] == ["q0", "q1"]
    for line, question in zip(output, QUESTIONS, strict=True):
        body = line["response"]["body"]
        assert body["status"] == "completed"
        assert f"You said: “{question}”" in body["output"][-1]["content"][0]["text"]
    assert api.batches.list().data[0].id == batch.id
