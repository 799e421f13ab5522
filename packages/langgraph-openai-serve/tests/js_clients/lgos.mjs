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

// What the `weather` graph answers once its get_weather call came back.
export const weatherAnswer = (result, name = "") =>
  `The weather in Oslo: ${result}${name ? ` (${name})` : ""}.`;
