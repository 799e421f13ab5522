import openai
from openai import OpenAI
from openai.types.responses import (
    ResponseInputMessageItem,
    ResponseInputText,
    ResponseOutputMessage,
    ResponseOutputText,
)


def main(base_url: str = "http://127.0.0.1:8000/v1") -> None:
    with OpenAI(base_url=base_url, api_key="unused") as client:
        first = client.responses.create(model="recall", input="My name is Ada.")
        second = client.responses.create(
            model="recall", input="I like tea.", previous_response_id=first.id
        )
        # Only the new input travels: the server adds the earlier turns.
        third = client.responses.create(
            model="recall", input="What do you know?", previous_response_id=second.id
        )
        print(third.output_text)

        kept = client.responses.retrieve(second.id)
        print("retrieved:", kept == second)
        # What the second turn was generated from: the first turn, then its own.
        items = client.responses.input_items.list(second.id, order="asc")
        used = [
            part.text
            for item in items.data
            if isinstance(item, ResponseInputMessageItem | ResponseOutputMessage)
            for part in item.content
            if isinstance(part, ResponseInputText | ResponseOutputText)
        ]
        print("second turn's input items:", used)

        client.responses.delete(first.id)
        fleeting = client.responses.create(model="recall", input="Hi", store=False)
        for gone in (first.id, fleeting.id):  # deleted, and never kept
            try:
                client.responses.retrieve(gone)
            except openai.NotFoundError as missing:
                print("retrieve:", missing.status_code, missing.code)


if __name__ == "__main__":
    main()
