import time

import openai
from openai import OpenAI
from openai.types.responses import Response


def final_answer(response: Response) -> str:
    """The answer alone: ``output_text`` also joins any commentary (status)
    text, so keep only the ``phase="final_answer"`` messages."""
    return "".join(
        part.text
        for item in response.output
        if item.type == "message" and item.phase == "final_answer"
        for part in item.content
        if part.type == "output_text"
    )


def main(base_url: str = "http://127.0.0.1:8000/v1") -> None:
    with (
        OpenAI(base_url=base_url, api_key="sk-alice-1") as alice,
        OpenAI(base_url=base_url, api_key="sk-bob-1") as bob,
        OpenAI(base_url=base_url, api_key="sk-guess", max_retries=0) as stranger,
    ):
        try:
            stranger.models.list()
        except openai.AuthenticationError as error:
            print(error.status_code, error.code)

        job = alice.responses.create(model="notes", input="Buy milk", background=True)
        while job.status in ("queued", "in_progress"):
            time.sleep(0.1)
            job = alice.responses.retrieve(job.id)
        print(job.status, final_answer(job))

        try:
            bob.responses.retrieve(job.id)
        except openai.NotFoundError as error:
            print(error.status_code, error.code)


if __name__ == "__main__":
    main()
