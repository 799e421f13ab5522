import json
import sys
import time

from openai import OpenAI
from openai.types.responses import Response

DATASET = [
    ("What is the capital of France?", "Paris"),
    ("What is the capital of Japan?", "Tokyo"),
    ("What is the capital of Kenya?", "Nairobi"),
    ("What is the capital of Chile?", "Santiago"),
]


def main(lgos_url: str, files_url: str, files_key: str) -> None:
    lgos = OpenAI(base_url=lgos_url, api_key="unused")
    files = OpenAI(base_url=files_url, api_key=files_key)

    # 1. The dataset as a JSONL file of requests, one per line.
    lines = [
        {
            "custom_id": f"q{index}",
            "method": "POST",
            "url": "/v1/responses",
            "body": {"model": "capitals", "input": question},
        }
        for index, (question, _) in enumerate(DATASET)
    ]
    jsonl = "".join(json.dumps(line) + "\n" for line in lines).encode()
    upload = files.files.create(file=("capitals.jsonl", jsonl), purpose="batch")

    # 2. A batch over it, then wait for it to end.
    batch = lgos.batches.create(
        input_file_id=upload.id,
        endpoint="/v1/responses",
        completion_window="24h",
        metadata={"dataset": "capitals-v1"},
    )
    print("created:", batch.status)
    while batch.status not in ("completed", "failed", "expired", "cancelled"):
        time.sleep(0.2)
        batch = lgos.batches.retrieve(batch.id)
    counts = batch.request_counts
    print(f"ended: {batch.status}, {counts.completed} of {counts.total} answered")

    # 3. Score the answers: each output line names its request by custom_id.
    answers = {}
    for text in files.files.content(batch.output_file_id).text.splitlines():
        line = json.loads(text)
        answers[line["custom_id"]] = Response.model_validate(
            line["response"]["body"]
        ).output_text
    right = 0
    for index, (question, expected) in enumerate(DATASET):
        got = answers[f"q{index}"]
        right += got == expected
        mark = "ok" if got == expected else "WRONG"
        print(f"{question} {got!r} (expected {expected!r}) {mark}")
    print(f"accuracy: {right}/{len(DATASET)}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
