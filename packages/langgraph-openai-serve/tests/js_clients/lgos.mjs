// Where the LGOS process under test listens (tests/test_js_clients.py starts
// it and sets LGOS_BASE_URL), and what every journey shares.
import assert from "node:assert/strict";

export const baseURL = process.env.LGOS_BASE_URL;
assert.ok(baseURL, "LGOS_BASE_URL is not set: run through tests/test_js_clients.py");

// LGOS without LGOS_API_KEYS takes any key; the clients insist on one.
export const apiKey = "unused";

export const STATUSES = [
  "Searching the knowledge base",
  "Reading 3 documents",
  "Writing the answer",
];

// The `forecast` graph's structured answer, and its schema as clients write it.
export const FORECAST = { city: "Oslo", celsius: 21 };

// What the `forecast` graph answers when asked for no schema: the model
// keyword arguments it was handed (sorted keys, JSON).
export const controlsAnswer = (kwargs) =>
  `controls: ${JSON.stringify(Object.fromEntries(Object.entries(kwargs).sort()))}`
    .replaceAll(",", ", ")
    .replaceAll(":", ": ")
    .replace("controls:  ", "controls: ");

// What the `weather` graph answers once its get_weather call came back.
export const weatherAnswer = (result, name = "") =>
  `The weather in Oslo: ${result}${name ? ` (${name})` : ""}.`;
