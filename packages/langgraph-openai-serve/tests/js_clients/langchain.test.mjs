// LangChain.js (`@langchain/openai`) against LGOS: ChatOpenAI on Chat
// Completions and, with `useResponsesApi`, on Responses.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { z } from "zod";
import {
  apiKey,
  baseURL,
  controlsAnswer,
  FORECAST,
  STATUSES,
  weatherAnswer,
} from "./lgos.mjs";

const Forecast = z.object({ city: z.string(), celsius: z.number() });

const chat = (model, options = {}) =>
  new ChatOpenAI({ model, apiKey, configuration: { baseURL }, maxRetries: 0, ...options });

const getWeather = tool(async ({ city }) => `sunny in ${city}`, {
  name: "get_weather",
  description: "The weather in a city",
  schema: z.object({ city: z.string() }),
});

const apis = {
  "Chat Completions": {},
  "Responses (useResponsesApi)": { useResponsesApi: true },
};

for (const [api, options] of Object.entries(apis)) {
  describe(`LangChain.js ChatOpenAI, ${api}`, () => {
    test("invoke", async () => {
      const answer = await chat("words", options).invoke("Hi");
      assert.equal(answer.text, "one two three four five");
      assert.ok(answer.usage_metadata.total_tokens > 0);
    });

    test("stream", async () => {
      let text = "";
      for await (const chunk of await chat("words", options).stream("Hi")) {
        text += chunk.text;
      }
      assert.equal(text, "one two three four five");
    });

    test("standard tool loop (tool.invoke(toolCall) -> named ToolMessage)", async () => {
      const model = chat("weather", options).bindTools([getWeather]);
      const messages = [new HumanMessage("Weather in Oslo?")];
      const asked = await model.invoke(messages);
      messages.push(asked);
      for (const call of asked.tool_calls) {
        messages.push(await getWeather.invoke(call));
      }
      const answer = await model.invoke(messages);
      // The graph sees the ToolMessage's name on Chat Completions; the
      // Responses API has no name on a function_call_output.
      const name = options.useResponsesApi ? "" : "get_weather";
      assert.equal(answer.text, weatherAnswer("sunny in Oslo", name));
    });

    test("multi-turn", async () => {
      const model = chat("history", options);
      const messages = [new HumanMessage("One")];
      messages.push(await model.invoke(messages), new HumanMessage("Two"));
      const answer = await model.invoke(messages);
      assert.equal(answer.text, "Saw human:One | ai:Saw human:One | human:Two");
    });

    test("structured output with withStructuredOutput (jsonSchema)", async () => {
      const model = chat("forecast", options).withStructuredOutput(Forecast, {
        name: "forecast",
        method: "jsonSchema",
      });
      assert.deepEqual(await model.invoke("Forecast?"), FORECAST);
    });

    test("generation controls set on ChatOpenAI", async () => {
      const model = chat("forecast", {
        ...options,
        temperature: 0.2,
        topP: 0.9,
        maxTokens: 64,
      });
      const answer = await model.invoke("Hi");
      assert.equal(
        answer.text,
        controlsAnswer({ temperature: 0.2, top_p: 0.9, max_tokens: 64 }),
      );
    });

    test("errors: unknown model", async () => {
      await assert.rejects(chat("missing", options).invoke("Hi"), (error) =>
        /model_not_found|does not exist/.test(String(error.code ?? error.message)),
      );
    });
  });
}

async function streamed(model, input) {
  let message;
  for await (const chunk of await model.stream(input)) {
    message = message ? message.concat(chunk) : chunk;
  }
  return message;
}

describe("LangChain.js ChatOpenAI, Responses status updates", () => {
  test("by default: commentary, joined to the streamed text", async () => {
    const message = await streamed(chat("status", { useResponsesApi: true }), "Hi");
    // The default contract: commentary messages, which LangChain.js joins.
    assert.equal(message.text, [...STATUSES, "w0 w1 w2"].join(""));
  });

  test("as reasoning (modelKwargs metadata.lgos_status), then a second turn", async () => {
    const options = {
      useResponsesApi: true,
      modelKwargs: { metadata: { lgos_status: "reasoning" } },
    };
    const message = await streamed(chat("status", options), "Hi");
    assert.equal(message.text, "w0 w1 w2");
    const reasoning = message.contentBlocks
      .filter((block) => block.type === "reasoning")
      .map((block) => block.reasoning);
    assert.deepEqual(reasoning, STATUSES);
    const answer = await chat("history", options).invoke([
      new HumanMessage("Hi"),
      message,
      new HumanMessage("Two"),
    ]);
    assert.equal(answer.text, "Saw human:Hi | ai:w0 w1 w2 | human:Two");
  });
});
