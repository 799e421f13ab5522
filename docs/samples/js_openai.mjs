import OpenAI from "openai";

const client = new OpenAI({
  baseURL: process.env.LGOS_BASE_URL ?? "http://127.0.0.1:8000/v1",
  apiKey: "unused", // any key, unless the server sets LGOS_API_KEYS
});

const getWeather = ({ city }) => (city === "Oslo" ? "sunny" : "unknown");
const parameters = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
};

// Responses: stream the first turn, status updates as reasoning summaries.
const tools = [{ type: "function", name: "get_weather", parameters }];
const input = [{ role: "user", content: "What's the weather in Oslo?" }];
const stream = client.responses.stream({
  model: "assistant",
  input,
  tools,
  metadata: { lgos_status: "reasoning" },
});
stream.on("response.reasoning_summary_text.delta", (event) =>
  console.log(`(${event.delta})`),
);
const first = await stream.finalResponse();

// Run the function calls, then send everything back (the SDK's items as
// they are) with their outputs.
input.push(...first.output);
for (const item of first.output) {
  if (item.type === "function_call") {
    const output = getWeather(JSON.parse(item.arguments));
    input.push({ type: "function_call_output", call_id: item.call_id, output });
  }
}
const second = await client.responses.create({ model: "assistant", input, tools });
console.log(second.output_text);

// Chat Completions: the SDK's own tool loop.
const runner = client.chat.completions.runTools({
  model: "assistant",
  messages: [{ role: "user", content: "What's the weather in Oslo?" }],
  tools: [
    {
      type: "function",
      function: { name: "get_weather", parameters, function: getWeather, parse: JSON.parse },
    },
  ],
});
console.log(await runner.finalContent());
