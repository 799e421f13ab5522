// The `openai` npm SDK against LGOS: Chat Completions and Responses.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import OpenAI from "openai";
import { zodResponseFormat, zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import {
  apiKey,
  baseURL,
  controlsAnswer,
  FORECAST,
  STATUSES,
  weatherAnswer,
} from "./lgos.mjs";

const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });

const Forecast = z.object({ city: z.string(), celsius: z.number() });

const getWeather = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
    },
  },
};

describe("openai SDK, Chat Completions", () => {
  test("text", async () => {
    const completion = await client.chat.completions.create({
      model: "words",
      messages: [{ role: "user", content: "Hi" }],
    });
    assert.equal(completion.choices[0].message.content, "one two three four five");
    assert.equal(completion.choices[0].finish_reason, "stop");
  });

  test("stream with usage", async () => {
    const stream = await client.chat.completions.create({
      model: "words",
      messages: [{ role: "user", content: "Hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      usage = chunk.usage ?? usage;
    }
    assert.equal(text, "one two three four five");
    assert.ok(usage.total_tokens > 0);
  });

  test("tool loop with runTools", async () => {
    const runner = client.chat.completions.runTools({
      model: "weather",
      messages: [{ role: "user", content: "Weather in Oslo?" }],
      tools: [
        {
          type: "function",
          function: {
            ...getWeather.function,
            function: ({ city }) => `sunny in ${city}`,
            parse: JSON.parse,
          },
        },
      ],
    });
    assert.equal(await runner.finalContent(), weatherAnswer("sunny in Oslo"));
  });

  test("generation controls reach a graph that declares them", async () => {
    const completion = await client.chat.completions.create({
      model: "forecast",
      messages: [{ role: "user", content: "Hi" }],
      temperature: 0.2,
      top_p: 0.9,
      max_completion_tokens: 64,
      stop: ["END"],
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: 0.25,
    });
    assert.equal(
      completion.choices[0].message.content,
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

  test("structured output with parse() and zodResponseFormat", async () => {
    const completion = await client.chat.completions.parse({
      model: "forecast",
      messages: [{ role: "user", content: "Forecast?" }],
      response_format: zodResponseFormat(Forecast, "forecast"),
    });
    assert.deepEqual(completion.choices[0].message.parsed, FORECAST);
  });

  test("error envelopes: unknown model, bad message with its param path", async () => {
    await assert.rejects(
      client.chat.completions.create({
        model: "missing",
        messages: [{ role: "user", content: "Hi" }],
      }),
      (error) => error.status === 404 && error.code === "model_not_found",
    );
    await assert.rejects(
      client.chat.completions.create({
        model: "words",
        messages: [
          { role: "user", content: "Hi" },
          { role: "assistant", content: "x", function_call: { name: "f" } },
        ],
      }),
      (error) => error.status === 400 && error.param === "messages[1].function_call",
    );
  });
});

describe("openai SDK, Responses", () => {
  test("text", async () => {
    const response = await client.responses.create({ model: "words", input: "Hi" });
    assert.equal(response.output_text, "one two three four five");
    assert.equal(response.status, "completed");
  });

  test("stream helper", async () => {
    const stream = client.responses.stream({ model: "words", input: "Hi" });
    let deltas = 0;
    stream.on("response.output_text.delta", () => deltas++);
    const response = await stream.finalResponse();
    assert.equal(response.output_text, "one two three four five");
    assert.equal(deltas, 5);
  });

  test("tool loop replaying the stream helper's output (parsed_arguments)", async () => {
    const tools = [{ type: "function", ...getWeather.function }];
    const input = [{ role: "user", content: "Weather in Oslo?" }];
    const first = await client.responses
      .stream({ model: "weather", input, tools })
      .finalResponse();
    const [call] = first.output;
    assert.equal(call.type, "function_call");
    assert.ok("parsed_arguments" in call);
    const second = await client.responses.create({
      model: "weather",
      tools,
      input: [
        ...input,
        ...first.output,
        { type: "function_call_output", call_id: call.call_id, output: "sunny" },
      ],
    });
    assert.equal(second.output_text, weatherAnswer("sunny"));
  });

  test("multi-turn: replayed output, then previous_response_id", async () => {
    const first = await client.responses.create({ model: "history", input: "One" });
    const replayed = await client.responses.create({
      model: "history",
      input: [
        { role: "user", content: "One" },
        ...first.output,
        { role: "user", content: "Two" },
      ],
    });
    const chained = await client.responses.create({
      model: "history",
      input: "Two",
      previous_response_id: first.id,
    });
    const expected = "Saw human:One | ai:Saw human:One | human:Two";
    assert.equal(replayed.output_text, expected);
    assert.equal(chained.output_text, expected);
  });

  test("status updates stream as commentary messages", async () => {
    const stream = client.responses.stream({ model: "status", input: "Hi" });
    const response = await stream.finalResponse();
    const messages = response.output.filter((item) => item.type === "message");
    assert.deepEqual(
      messages.map((m) => [m.phase, m.content[0].text]),
      [...STATUSES.map((s) => ["commentary", s]), ["final_answer", "w0 w1 w2"]],
    );
  });

  test("status updates as reasoning summaries (metadata.lgos_status)", async () => {
    const stream = client.responses.stream({
      model: "status",
      input: "Hi",
      metadata: { lgos_status: "reasoning" },
    });
    const summaries = [];
    stream.on("response.reasoning_summary_text.delta", (event) => summaries.push(event.delta));
    const response = await stream.finalResponse();
    assert.deepEqual(summaries, STATUSES);
    assert.equal(response.output_text, "w0 w1 w2");
    assert.deepEqual(
      response.output.map((item) => item.type),
      ["reasoning", "reasoning", "reasoning", "message"],
    );
  });

  test("structured output with parse() and zodTextFormat, and controls", async () => {
    const response = await client.responses.parse({
      model: "forecast",
      input: "Forecast?",
      text: { format: zodTextFormat(Forecast, "forecast") },
      temperature: 0.5,
      max_output_tokens: 100,
    });
    assert.deepEqual(response.output_parsed, FORECAST);
  });

  test("an answer off the schema fails clearly, streamed or not", async () => {
    const text = { format: zodTextFormat(Forecast, "forecast") };
    await assert.rejects(
      client.responses.parse({ model: "sloppy", input: "Forecast?", text }),
      (error) =>
        error.status === 500 &&
        error.code === "invalid_structured_output" &&
        error.message.includes("(at $.celsius)"),
    );
    // Streamed, the SDK raises the stream's error event.
    const stream = client.responses.stream({ model: "sloppy", input: "Forecast?", text });
    await assert.rejects(stream.finalResponse(), (error) =>
      error.message.includes("does not match the requested schema 'forecast'"),
    );
  });

  test("a graph without controls keeps refusing them, naming the param", async () => {
    await assert.rejects(
      client.responses.create({ model: "words", input: "Hi", temperature: 0.5 }),
      (error) => error.status === 400 && error.param === "temperature",
    );
  });

  test("error envelopes with OpenAI's param paths", async () => {
    await assert.rejects(
      client.responses.create({
        model: "words",
        input: [{ role: "user", content: [{ type: "input_image", image_url: "x" }] }],
      }),
      (error) => error.status === 400 && error.param === "input[0].content[0].type",
    );
  });
});
