import openai
from openai import OpenAI
from openai.types.conversations import Message
from openai.types.responses import ResponseInputText, ResponseOutputText


def main(base_url: str = "http://127.0.0.1:8000/v1") -> None:
    with OpenAI(base_url=base_url, api_key="unused") as client:
        conversation = client.conversations.create(
            metadata={"topic": "introductions"},
            items=[{"role": "user", "content": "My name is Ada."}],
        )
        # Each Response runs after the Conversation's items, then adds its own.
        client.responses.create(
            model="recall", input="I like tea.", conversation=conversation.id
        )
        answer = client.responses.create(
            model="recall", input="What do you know?", conversation=conversation.id
        )
        print(answer.output_text)

        items = client.conversations.items.list(conversation.id, order="asc")
        print(
            "items:",
            [
                (item.role, part.text[:20])
                for item in items
                if isinstance(item, Message)
                for part in item.content
                if isinstance(part, ResponseInputText | ResponseOutputText)
            ],
        )

        client.conversations.delete(conversation.id)
        try:
            client.conversations.retrieve(conversation.id)
        except openai.NotFoundError as missing:
            print("retrieve:", missing.status_code, missing.code)


if __name__ == "__main__":
    main()
