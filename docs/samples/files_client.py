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


DISPLAY_FILE = {
    "type": "function",
    "name": "display_file",
    "description": "Show a file from the Files API to the user.",
    "strict": True,
    "parameters": {
        "type": "object",
        "properties": {"file_id": {"type": "string"}, "title": {"type": "string"}},
        "required": ["file_id", "title"],
        "additionalProperties": False,
    },
}


def main(base_url: str = "http://127.0.0.1:8000/v1") -> None:
    with OpenAI(base_url=base_url, api_key="unused") as client:
        lgos = client.models.retrieve("viewer").model_extra["lgos"]
        print(lgos["features"], lgos["client_tools"])

        # The file was uploaded to an OpenAI-compatible Files API beforehand.
        question = {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Show me this"},
                {"type": "input_file", "file_id": "file-7c1d"},
            ],
        }
        first = client.responses.create(
            model="viewer", input=[question], tools=[DISPLAY_FILE]
        )
        (call,) = first.output
        arguments = json.loads(call.arguments)
        print(call.name, arguments)

        # Download arguments["file_id"] from the Files API and show it, then
        # report back with a small output: never the file's bytes.
        done = {"type": "function_call_output", "call_id": call.call_id}
        second = client.responses.create(
            model="viewer",
            input=[
                question,
                *[item.to_dict() for item in first.output],
                {**done, "output": json.dumps({"displayed": True})},
            ],
            tools=[DISPLAY_FILE],
        )
        print(final_answer(second))


if __name__ == "__main__":
    main()
