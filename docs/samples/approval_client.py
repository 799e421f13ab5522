import json

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
    with OpenAI(base_url=base_url, api_key="unused") as client:
        paused = client.responses.create(model="refunds", input="Order 42, 30 EUR")
        (call,) = paused.output
        print(paused.status, call.type, call.name)
        print(json.loads(call.arguments))

        answer = {"type": "function_call_output", "call_id": call.call_id}
        resumed = client.responses.create(
            model="refunds",
            previous_response_id=paused.id,
            input=[{**answer, "output": "approve"}],
        )
        print(final_answer(resumed))

        try:  # the run finished: the same answer cannot be given twice
            client.with_options(max_retries=0).responses.create(
                model="refunds",
                previous_response_id=paused.id,
                input=[{**answer, "output": "approve"}],
            )
        except openai.ConflictError as error:
            print(error.status_code, error.code)


if __name__ == "__main__":
    main()
