import { createOpenAI } from "@ai-sdk/openai";
import { ChatOpenAI } from "@langchain/openai";
import { generateText, Output } from "ai";
import OpenAI from "openai";
import { zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";

const baseURL = process.env.LGOS_BASE_URL ?? "http://127.0.0.1:8000/v1";
const Forecast = z.object({
  city: z.string(),
  celsius: z.number(),
  sky: z.enum(["sunny", "cloudy", "rainy"]),
});

// The Vercel AI SDK: Output.object, with generation controls.
const lgos = createOpenAI({ baseURL, apiKey: "unused" });
const { output } = await generateText({
  model: lgos("forecast"),
  prompt: "Forecast for Oslo?",
  output: Output.object({ schema: Forecast }),
  temperature: 0.2,
  maxOutputTokens: 200,
});
console.log(output);

// The openai SDK: responses.parse with a zod text format.
const client = new OpenAI({ baseURL, apiKey: "unused" });
const parsed = await client.responses.parse({
  model: "forecast",
  input: "Forecast for Oslo?",
  text: { format: zodTextFormat(Forecast, "forecast") },
});
console.log(parsed.output_parsed);

// LangChain.js: withStructuredOutput, as a JSON schema.
const model = new ChatOpenAI({ model: "forecast", apiKey: "unused", configuration: { baseURL } });
const structured = model.withStructuredOutput(Forecast, { method: "jsonSchema" });
console.log(await structured.invoke("Forecast for Oslo?"));
