from openai import OpenAI
from openai.types.responses import Response


# --8<-- [start:final_answer]
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


# --8<-- [end:final_answer]


def main(base_url: str = "http://127.0.0.1:8000/v1") -> None:
    with OpenAI(base_url=base_url, api_key="unused") as client:
        print([model.id for model in client.models.list()])

        reply = client.responses.create(model="echo", input="Hello, graph!")
        print(final_answer(reply))

        stream = client.chat.completions.create(
            model="echo",
            messages=[{"role": "user", "content": "Stream this"}],
            stream=True,
        )
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                print(chunk.choices[0].delta.content, end="|")
        print()


if __name__ == "__main__":
    main()
