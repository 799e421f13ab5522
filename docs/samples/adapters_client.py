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
    with OpenAI(base_url=base_url, api_key="unused") as client:
        reply = client.responses.create(
            model="qa",
            input="What is a checkpoint?",
            user="ada",
            metadata={"locale": "fr"},
        )
        print(final_answer(reply))

        stream = client.chat.completions.create(
            model="qa",
            messages=[{"role": "user", "content": "And a thread?"}],
            stream=True,
        )
        print("".join(c.choices[0].delta.content or "" for c in stream if c.choices))


if __name__ == "__main__":
    main()
