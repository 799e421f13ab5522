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
        question = {"role": "user", "content": "What is LangGraph?"}

        phases = {}
        stream = client.responses.create(
            model="research", input=[question], stream=True
        )
        for event in stream:
            if (
                event.type == "response.output_item.added"
                and event.item.type == "message"
            ):
                phases[event.output_index] = event.item.phase
            elif event.type == "response.output_text.delta":
                if phases[event.output_index] == "commentary":
                    print(f"[status] {event.delta}")
                else:
                    print(event.delta, end="", flush=True)
            elif event.type == "response.completed":
                response = event.response
        print()

        answer = response.output[-1]
        for note in answer.content[0].annotations:
            print(f"source: {note.title} <{note.url}>")

        # LGOS stores nothing: the next turn sends the whole conversation back.
        follow_up = client.responses.create(
            model="research",
            input=[
                question,
                *[item.to_dict() for item in response.output],
                {"role": "user", "content": "Tell me more."},
            ],
        )
        print(final_answer(follow_up))


if __name__ == "__main__":
    main()
