import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { z } from "zod";

const lgos = createOpenAI({
  baseURL: process.env.LGOS_BASE_URL ?? "http://127.0.0.1:8000/v1",
  apiKey: "unused",
});

const tools = {
  get_weather: tool({
    description: "The weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => (city === "Oslo" ? "sunny" : "unknown"),
  }),
};

// lgos(...) speaks the Responses API: status updates as reasoning, the tool
// loop run by the SDK (stopWhen), the answer streamed.
const messages = [{ role: "user", content: "What's the weather in Oslo?" }];
const result = streamText({
  model: lgos("assistant"),
  messages,
  tools,
  stopWhen: stepCountIs(3),
  providerOptions: { openai: { metadata: { lgos_status: "reasoning" } } },
});
for await (const part of result.fullStream) {
  if (part.type === "reasoning-delta") console.log(`(${part.text})`);
  if (part.type === "tool-call") console.log(`-> ${part.toolName}(${JSON.stringify(part.input)})`);
  if (part.type === "text-delta") process.stdout.write(part.text);
}
console.log();

// The next turn sends the first answer back as item references: the server
// keeps Responses (LGOS_RESPONSE_STORE). Without a store, pass
// providerOptions: { openai: { store: false } } to send the items themselves.
messages.push(...(await result.response).messages, {
  role: "user",
  content: "And tomorrow?",
});
const next = await generateText({
  model: lgos("assistant"),
  messages,
  tools,
  stopWhen: stepCountIs(3),
});
console.log(next.text);

// lgos.chat(...) speaks Chat Completions.
const chat = await generateText({
  model: lgos.chat("assistant"),
  prompt: "What's the weather in Oslo?",
  tools,
  stopWhen: stepCountIs(3),
});
console.log(chat.text);
