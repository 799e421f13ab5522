import json

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


def main(
    first_url: str = "http://127.0.0.1:8000/v1",
    second_url: str = "http://127.0.0.1:8001/v1",
) -> None:
    with (
        OpenAI(base_url=first_url, api_key="unused") as first,
        OpenAI(base_url=second_url, api_key="unused") as second,
    ):
        paused = first.responses.create(model="refunds", input="Order 42, 30 EUR")
        (call,) = paused.output
        print("paused by the first process:", json.loads(call.arguments)["question"])

        answer = {
            "type": "function_call_output",
            "call_id": call.call_id,
            "output": "approve",
        }
        resumed = second.responses.create(
            model="refunds", previous_response_id=paused.id, input=[answer]
        )
        print("resumed by the second process:", final_answer(resumed))


if __name__ == "__main__":
    main()
