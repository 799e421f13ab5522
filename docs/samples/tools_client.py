from openai import OpenAI


def main(base_url: str = "http://127.0.0.1:8000/v1") -> None:
    with OpenAI(base_url=base_url, api_key="unused") as client:
        print(client.models.retrieve("assistant").model_extra["lgos"]["server_tools"])

        reply = client.responses.create(
            model="assistant",
            input="What is LangGraph?",
            tools=[{"type": "web_search"}, {"type": "custom", "name": "word_count"}],
        )
        for item in reply.output:
            if item.type == "web_search_call":
                print(item.type, item.status, item.action.query)
            elif item.type == "custom_tool_call":
                print(item.type, item.name, repr(item.input))
            elif item.type == "custom_tool_call_output":
                print(item.type, repr(item.output))
            else:
                print(item.type, item.content[0].text)

        plain = client.responses.create(model="assistant", input="Hello")
        print([item.type for item in plain.output])


if __name__ == "__main__":
    main()
