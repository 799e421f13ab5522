from openai import OpenAI


def main(base_url: str = "http://127.0.0.1:8000/v1") -> None:
    with OpenAI(base_url=base_url, api_key="unused") as client:
        for model in ("tagged", "by-node", "leaky"):
            stream = client.responses.create(model=model, input="Ok?", stream=True)
            text, end = "", ""
            for event in stream:
                if event.type == "response.output_text.delta":
                    text += event.delta
                elif event.type == "response.completed":
                    end = "completed"
                elif event.type == "response.failed":
                    end = f"failed: {event.response.error.message}"
            print(f"{model}: {text!r} -> {end}")


if __name__ == "__main__":
    main()
