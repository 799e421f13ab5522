from openai import OpenAI


def main(base_url: str = "http://127.0.0.1:8000/v1") -> None:
    with OpenAI(base_url=base_url, api_key="unused") as client:
        reply = client.responses.create(
            model="qa",
            input="What is a checkpoint?",
            user="ada",
            metadata={"locale": "fr"},
        )
        print(reply.output_text)

        stream = client.chat.completions.create(
            model="qa",
            messages=[{"role": "user", "content": "And a thread?"}],
            stream=True,
        )
        print("".join(c.choices[0].delta.content or "" for c in stream if c.choices))


if __name__ == "__main__":
    main()
