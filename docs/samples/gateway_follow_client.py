import base64
import binascii
import os
from typing import Any

from openai import OpenAI


def lgos_id(gateway_id: str) -> str:
    """LGOS's Response id inside LiteLLM's: ``resp_`` and the base64 of
    ``litellm:custom_llm_provider:...;model_id:...;response_id:<LGOS id>``."""
    try:
        encoded = gateway_id.removeprefix("resp_")
        text = base64.b64decode(encoded, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return gateway_id  # not one of LiteLLM's: LGOS's own
    return text.partition(";response_id:")[2] or gateway_id


def show(event: Any) -> None:
    if event.type == "response.output_item.done" and event.item.type == "message":
        print(f"{event.item.phase}: {event.item.content[0].text}")


def main(gateway: str, key: str) -> None:
    with (
        OpenAI(base_url=f"{gateway}/v1", api_key=key) as client,
        OpenAI(base_url=f"{gateway}/lgos/v1", api_key=key) as follow,
    ):
        job = client.responses.create(
            model="lgos/report", input="Monthly report", background=True
        )
        run = lgos_id(job.id)  # the follow route wants LGOS's id

        seen = -1
        with follow.responses.retrieve(run, stream=True) as stream:
            for event in stream:
                seen = event.sequence_number
                show(event)
                if event.type == "response.output_item.done":
                    break  # say the connection drops here
        print("reconnecting")
        with follow.responses.retrieve(run, stream=True, starting_after=seen) as stream:
            for event in stream:
                show(event)
        print(follow.responses.retrieve(run).status)


if __name__ == "__main__":
    main("http://127.0.0.1:4000", os.environ["LITELLM_MASTER_KEY"])
