import time

import openai
from openai import OpenAI


def main(base_url: str = "http://127.0.0.1:8000/v1") -> None:
    def as_user(key: str, end_user: str) -> OpenAI:
        # What a gateway sends for each of its users.
        return OpenAI(
            base_url=base_url,
            api_key=key,
            default_headers={"x-lgos-end-user": end_user},
            max_retries=0,
        )

    with (
        as_user("sk-gateway", "alice") as alice,
        as_user("sk-gateway", "bob") as bob,
        as_user("sk-bob-1", "alice") as pretender,  # a client key, not a gateway's
    ):
        job = alice.responses.create(model="notes", input="Buy milk", background=True)
        while job.status in ("queued", "in_progress"):
            time.sleep(0.1)
            job = alice.responses.retrieve(job.id)
        print(job.status, job.output_text)

        try:
            bob.responses.retrieve(job.id)
        except openai.NotFoundError as error:
            print(error.status_code, error.code)

        try:
            pretender.responses.retrieve(job.id)
        except openai.PermissionDeniedError as error:
            print(error.status_code, error.code)


if __name__ == "__main__":
    main()
