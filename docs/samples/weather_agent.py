import asyncio

from agents import (
    Agent,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI


@function_tool
def get_weather(city: str) -> str:
    """Today's weather for a city."""
    return f"sunny, 21 °C in {city}"


async def main(base_url: str = "http://127.0.0.1:8000/v1") -> None:
    set_tracing_disabled(True)  # otherwise the SDK uploads traces to OpenAI
    async with AsyncOpenAI(base_url=base_url, api_key="unused") as client:
        agent = Agent(
            name="assistant",
            instructions="Answer in one sentence.",
            model=OpenAIResponsesModel(model="weather", openai_client=client),
            tools=[get_weather],
        )

        result = await Runner.run(agent, "What is the weather in Lyon?")
        for item in result.new_items:
            print(item.type)
        print(result.final_output)

        streamed = Runner.run_streamed(agent, "And in Lyon again?")
        async for event in streamed.stream_events():
            if event.type == "run_item_stream_event" and event.name == "tool_output":
                print(f"[{event.item.output}]")
            elif (
                event.type == "raw_response_event"
                and event.data.type == "response.output_text.delta"
            ):
                print(event.data.delta, end="|")
        print()


if __name__ == "__main__":
    asyncio.run(main())
