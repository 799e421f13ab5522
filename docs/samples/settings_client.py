import json

import httpx
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
    # Discovery: the detail route carries the settings schema and defaults.
    detail = httpx.get(f"{base_url}/models/tutor").json()
    settings = detail["lgos"]["client_settings"]
    print(sorted(settings["json_schema"]["properties"]), settings["defaults"])

    with OpenAI(base_url=base_url, api_key="unused") as client:
        default = client.responses.create(model="tutor", input="What is a graph?")
        print(final_answer(default))

        changed = client.responses.create(
            model="tutor",
            input="What is a graph?",
            metadata={"lgos_settings": json.dumps({"audience": "child"})},
        )
        print(final_answer(changed))

        try:
            client.responses.create(
                model="tutor",
                input="What is a graph?",
                metadata={"lgos_settings": json.dumps({"max_sentences": 50})},
            )
        except openai.BadRequestError as error:
            print(error.body["param"], "-", error.body["message"])


if __name__ == "__main__":
    main()
