/** Which key a request carries, and which environment it selects: tables of cases. */
import { describe, expect, it } from "vitest";
import { compileEnvironment } from "../../src/engine/compile.js";
import { ApiError } from "../../src/evaluation/problem.js";
import { environmentFor, keyFromHeaders } from "../../src/http/auth.js";
import { createSnapshot } from "../../src/store/snapshot.js";
import { FlagStore } from "../../src/store/store.js";
import { env } from "../engine/helpers.js";

const KEY = "dev-key-0123456789";

/** [what, request headers, key read (undefined: none)]. */
const keys: [string, [string, string][], string | undefined][] = [
  ["X-API-Key", [["x-api-key", KEY]], KEY],
  ["X-API-Key in any case", [["X-Api-KEY", KEY]], KEY],
  ["X-API-Key with spaces around", [["x-api-key", `  ${KEY} `]], KEY],
  ["a Bearer token", [["authorization", `Bearer ${KEY}`]], KEY],
  ["a bearer token in lower case, spaces around", [["authorization", `bearer   ${KEY}  `]], KEY],
  [
    "X-API-Key before Authorization",
    [
      ["x-api-key", KEY],
      ["authorization", "Bearer other-key-0123456789"],
    ],
    KEY,
  ],
  [
    "an empty X-API-Key, then a Bearer token",
    [
      ["x-api-key", ""],
      ["authorization", `Bearer ${KEY}`],
    ],
    KEY,
  ],
  ["Basic credentials", [["authorization", `Basic ${KEY}`]], undefined],
  ["Bearer with nothing after it", [["authorization", "Bearer "]], undefined],
  ["Bearer with two words", [["authorization", `Bearer ${KEY} more`]], undefined],
  [
    "two Authorization values (joined, as h3 reads them)",
    [
      ["authorization", `Bearer ${KEY}`],
      ["authorization", `Bearer ${KEY}`],
    ],
    undefined,
  ],
  ["no key at all", [["accept", "application/json"]], undefined],
];

describe("keyFromHeaders", () => {
  it.each(keys)("%s", (_what, pairs, expected) => {
    const headers = new Headers();
    for (const [name, value] of pairs) headers.append(name, value);
    expect(keyFromHeaders(headers)).toBe(expected);
  });
});

describe("environmentFor", () => {
  const store = new FlagStore();
  const config = { ...env({ flags: {} }), name: "dev" };
  store.replace([createSnapshot(config, compileEnvironment(config).flags, KEY)]);

  /** [what, request headers, environment (or the 401's details)]. */
  const cases: [string, Record<string, string>, { env: string } | { refused: string }][] = [
    ["the environment's key", { "x-api-key": KEY }, { env: "dev" }],
    ["its key as a Bearer token", { authorization: `Bearer ${KEY}` }, { env: "dev" }],
    ["no key", {}, { refused: "missing API key: send X-API-Key or Authorization: Bearer" }],
    ["a key of no environment", { "x-api-key": "nope-key-0123456789" }, { refused: "unknown API key" }],
  ];

  it.each(cases)("%s", (_what, headers, expected) => {
    const attempt = () => environmentFor(store, new Headers(headers));
    if ("env" in expected) return expect(attempt().name).toBe(expected.env);
    let thrown: unknown;
    try {
      attempt();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    const error = thrown as ApiError;
    expect([error.status, error.data, error.headers]).toEqual([
      401,
      { errorCode: "UNAUTHORIZED", errorDetails: expected.refused },
      { "www-authenticate": 'Bearer realm="flagserve"' },
    ]);
  });
});
