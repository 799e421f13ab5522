import json

from openai import OpenAI


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
        print("resumed by the second process:", resumed.output_text)


if __name__ == "__main__":
    main()
