from openai import OpenAI


def main(base_url: str = "http://127.0.0.1:8000/v1") -> None:
    with OpenAI(base_url=base_url, api_key="unused") as client:
        print([model.id for model in client.models.list()])

        reply = client.responses.create(model="echo", input="Hello, graph!")
        print(reply.output_text)

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
