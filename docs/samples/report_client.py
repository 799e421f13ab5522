from openai import OpenAI


def main(base_url: str = "http://127.0.0.1:8000/v1") -> None:
    with OpenAI(base_url=base_url, api_key="unused") as client:
        retry_safe = {"Idempotency-Key": "report-2026-11"}
        job = client.responses.create(
            model="report",
            input="Monthly report",
            background=True,
            extra_headers=retry_safe,
        )
        print(job.status)
        again = client.responses.create(
            model="report",
            input="Monthly report",
            background=True,
            extra_headers=retry_safe,
        )
        print("same run:", again.id == job.id)

        # Follow the run's events; a dropped stream resumes after `seen`.
        seen = 0
        for event in client.responses.retrieve(job.id, stream=True):
            seen = event.sequence_number
            if event.type == "response.output_item.added":
                print(f"{event.item.phase}:", end=" ")
            elif event.type == "response.output_text.done":
                print(event.text)
            elif event.type == "response.completed":
                break

        replay = client.responses.retrieve(job.id, stream=True, starting_after=seen - 1)
        print("after", seen - 1, [event.type for event in replay])
        done = client.responses.retrieve(job.id)
        print(done.status, [item.phase for item in done.output])

        other = client.responses.create(model="report", input="Again", background=True)
        print(client.responses.cancel(other.id).status)


if __name__ == "__main__":
    main()
