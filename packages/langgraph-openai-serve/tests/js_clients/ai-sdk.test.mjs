// The Vercel AI SDK against LGOS: `openai(...)` (Responses) and
// `openai.chat(...)` (Chat Completions), with its own standard code.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createOpenAI } from "@ai-sdk/openai";
import { APICallError, generateText, Output, stepCountIs, streamText, tool } from "ai";
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

const openai = createOpenAI({ baseURL, apiKey });

const tools = {
  get_weather: tool({
    description: "The weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => `sunny in ${city}`,
  }),
};

const models = {
  "openai(...)": (id) => openai(id),
  "openai.chat(...)": (id) => openai.chat(id),
};

for (const [api, model] of Object.entries(models)) {
  describe(`AI SDK ${api}`, () => {
    test("generateText", async () => {
      const { text, usage } = await generateText({ model: model("words"), prompt: "Hi" });
      assert.equal(text, "one two three four five");
      assert.ok(usage.totalTokens > 0);
    });

    test("streamText", async () => {
      const result = streamText({ model: model("words"), prompt: "Hi" });
      const chunks = [];
      for await (const chunk of result.textStream) chunks.push(chunk);
      assert.equal(chunks.join(""), "one two three four five");
      assert.ok(chunks.length >= 5);
    });

    test("tool loop (stopWhen)", async () => {
      const { text, steps } = await generateText({
        model: model("weather"),
        prompt: "Weather in Oslo?",
        tools,
        stopWhen: stepCountIs(3),
      });
      assert.equal(text, weatherAnswer("sunny in Oslo"));
      assert.equal(steps.length, 2);
    });

    test("multi-turn with response.messages", async () => {
      const messages = [{ role: "user", content: "One" }];
      const first = await generateText({ model: model("history"), messages });
      messages.push(...first.response.messages, { role: "user", content: "Two" });
      const second = await generateText({ model: model("history"), messages });
      assert.equal(second.text, "Saw human:One | ai:Saw human:One | human:Two");
    });

    test("structured output with Output.object", async () => {
      const { output } = await generateText({
        model: model("forecast"),
        prompt: "Forecast?",
        output: Output.object({ schema: Forecast }),
      });
      assert.deepEqual(output, FORECAST);
    });

    test("an answer off the schema is an APICallError 500", async () => {
      await assert.rejects(
        generateText({
          model: model("sloppy"),
          prompt: "Forecast?",
          output: Output.object({ schema: Forecast }),
          maxRetries: 0, // a 500 is retried by default
        }),
        (error) =>
          APICallError.isInstance(error) &&
          error.statusCode === 500 &&
          error.message.includes("does not match the requested schema"),
      );
    });

    test("errors: unknown model is an APICallError 404", async () => {
      await assert.rejects(
        generateText({ model: model("missing"), prompt: "Hi" }),
        (error) => APICallError.isInstance(error) && error.statusCode === 404,
      );
    });
  });
}

describe("AI SDK generation controls", () => {
  test("openai.chat(...): temperature, topP, maxOutputTokens, seed, stopSequences, penalties", async () => {
    const { text } = await generateText({
      model: openai.chat("forecast"),
      prompt: "Hi",
      temperature: 0.2,
      topP: 0.9,
      maxOutputTokens: 64,
      seed: 7,
      stopSequences: ["END"],
      presencePenalty: 0.5,
      frequencyPenalty: 0.25,
    });
    assert.equal(
      text,
      controlsAnswer({
        temperature: 0.2,
        top_p: 0.9,
        max_tokens: 64,
        stop: ["END"],
        seed: 7,
        presence_penalty: 0.5,
        frequency_penalty: 0.25,
      }),
    );
  });

  test("openai(...): temperature, topP, maxOutputTokens", async () => {
    const { text } = await generateText({
      model: openai("forecast"),
      prompt: "Hi",
      temperature: 0.2,
      topP: 0.9,
      maxOutputTokens: 64,
    });
    assert.equal(text, controlsAnswer({ temperature: 0.2, top_p: 0.9, max_tokens: 64 }));
  });

  test("a graph without controls refuses them (APICallError 400)", async () => {
    await assert.rejects(
      generateText({ model: openai("words"), prompt: "Hi", temperature: 0.2 }),
      (error) => APICallError.isInstance(error) && error.statusCode === 400,
    );
  });
});

// The requests the AI SDK sent, to see what it replays.
function recording() {
  const inputs = [];
  const fetch = async (url, init) => {
    inputs.push(JSON.parse(init.body).input);
    return globalThis.fetch(url, init);
  };
  return { inputs, openai: createOpenAI({ baseURL, apiKey, fetch }) };
}

describe("AI SDK openai(...) against a response store", () => {
  test("the default second turn sends an item_reference", async () => {
    const { inputs, openai } = recording();
    const messages = [{ role: "user", content: "One" }];
    const first = await generateText({ model: openai("history"), messages });
    messages.push(...first.response.messages, { role: "user", content: "Two" });
    const second = await generateText({ model: openai("history"), messages });
    assert.equal(inputs[1][1].type, "item_reference");
    assert.equal(second.text, "Saw human:One | ai:Saw human:One | human:Two");
  });

  test("the second turn with store: false sends the items themselves", async () => {
    const providerOptions = { openai: { store: false } };
    const messages = [{ role: "user", content: "One" }];
    const first = await generateText({ model: openai("history"), messages, providerOptions });
    messages.push(...first.response.messages, { role: "user", content: "Two" });
    const second = await generateText({ model: openai("history"), messages, providerOptions });
    assert.equal(second.text, "Saw human:One | ai:Saw human:One | human:Two");
  });

  test("status updates by default: commentary, joined to the text", async () => {
    const result = streamText({ model: openai("status"), prompt: "Hi" });
    // The default contract: commentary messages, which the AI SDK joins.
    assert.equal(await result.text, [...STATUSES, "w0 w1 w2"].join(""));
  });

  test("status updates as reasoning (metadata.lgos_status), then a second turn", async () => {
    const { inputs, openai } = recording();
    const providerOptions = { openai: { metadata: { lgos_status: "reasoning" } } };
    const result = streamText({ model: openai("status"), prompt: "Hi", providerOptions });
    assert.equal(await result.text, "w0 w1 w2");
    const reasoning = (await result.reasoning).map((part) => part.text);
    assert.deepEqual(reasoning, STATUSES);
    const messages = [
      { role: "user", content: "Hi" },
      ...(await result.response).messages,
      { role: "user", content: "Two" },
    ];
    const second = await generateText({ model: openai("history"), messages });
    // The reasoning items went back by reference; the graph reads no status.
    assert.equal(inputs[1].filter((item) => item.type === "item_reference").length, 4);
    assert.equal(second.text, "Saw human:Hi | ai:w0 w1 w2 | human:Two");
  });

  test("status updates as reasoning, then a second turn with store: false", async () => {
    const { inputs, openai } = recording();
    const providerOptions = {
      openai: { store: false, metadata: { lgos_status: "reasoning" } },
    };
    const result = streamText({ model: openai("status"), prompt: "Hi", providerOptions });
    const messages = [
      { role: "user", content: "Hi" },
      ...(await result.response).messages,
      { role: "user", content: "Two" },
    ];
    const second = await generateText({
      model: openai("history"),
      messages,
      providerOptions: { openai: { store: false } },
    });
    // Without encrypted content the SDK leaves reasoning out when it does
    // not store (it warns); the answer goes back whole.
    assert.equal(inputs[1].filter((item) => item.type === "reasoning").length, 0);
    assert.equal(inputs[1].filter((item) => item.role === "assistant").length, 1);
    assert.equal(second.text, "Saw human:Hi | ai:w0 w1 w2 | human:Two");
  });
});
