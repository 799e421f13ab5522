import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { z } from "zod";

const getWeather = tool(async ({ city }) => (city === "Oslo" ? "sunny" : "unknown"), {
  name: "get_weather",
  description: "The weather in a city",
  schema: z.object({ city: z.string() }),
});

const model = new ChatOpenAI({
  model: "assistant",
  apiKey: "unused",
  configuration: { baseURL: process.env.LGOS_BASE_URL ?? "http://127.0.0.1:8000/v1" },
  useResponsesApi: true, // leave out for Chat Completions
  modelKwargs: { metadata: { lgos_status: "reasoning" } },
}).bindTools([getWeather]);

// The standard tool loop: the model asks, the tool answers, the model again.
const messages = [new HumanMessage("What's the weather in Oslo?")];
const asked = await model.invoke(messages);
messages.push(asked);
for (const call of asked.tool_calls) {
  messages.push(await getWeather.invoke(call)); // a ToolMessage, with its name
}

// Streamed: status updates arrive as reasoning blocks, apart from the text.
let answer;
for await (const chunk of await model.stream(messages)) {
  answer = answer ? answer.concat(chunk) : chunk;
}
for (const block of answer.contentBlocks) {
  if (block.type === "reasoning") console.log(`(${block.reasoning})`);
}
console.log(answer.text);
