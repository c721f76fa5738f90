/**
 * The OFREP answers once a request is read, as plain data: environment, body text and headers in;
 * status, headers and body out (what both ways in send). Tables of cases, with sessions, context
 * enrichment and counting on.
 */
import { describe, expect, it } from "vitest";
import { EvaluationCounts } from "../../src/answers/evaluation-counts.js";
import { createOfrepAnswerer, replyText, type OfrepReply } from "../../src/answers/ofrep-answers.js";
import { compileEnvironment } from "../../src/engine/compile.js";
import { ApiError } from "../../src/evaluation/problem.js";
import { createEnricher } from "../../src/fixture/enrich.js";
import { SessionStore } from "../../src/fixture/sessions.js";
import { createSnapshot } from "../../src/store/snapshot.js";
import { env } from "../engine/helpers.js";

const config = {
  ...env({
    flags: {
      checkout: {
        variants: { on: true, off: false },
        defaultVariant: "off",
        targeting: { if: [{ "==": [{ var: "plan" }, "pro"] }, "on", null] },
      },
      banner: {
        variants: { red: "red", blue: "blue" },
        defaultVariant: "blue",
        targeting: { if: [{ "==": [{ var: "team" }, "a"] }, "red", null] },
      },
      split: {
        variants: { a: "a", b: "b" },
        defaultVariant: "a",
        targeting: {
          fractional: [
            ["a", 1],
            ["b", 1],
          ],
        },
      },
      off: { state: "DISABLED", variants: { on: true }, defaultVariant: "on" },
    },
  }),
  name: "dev",
};
const snapshot = createSnapshot(config, compileEnvironment(config).flags, "dev-key-0123456789");
const sessions = new SessionStore();
const evaluations = new EvaluationCounts();
const answerer = createOfrepAnswerer({
  eventStreamPath: () => "/ofrep/v1/events?token=t",
  evaluations,
  sessions,
  enrich: createEnricher({ fromHeaders: { "x-team": "team" } }),
});

const body = (context: object) => JSON.stringify({ context });
type Outcome = { status: number; headers: Record<string, string>; body?: unknown } | { throws: [number, string] };

/** An answer as plain data, or the ApiError it threw. */
function run(fn: () => OfrepReply): Outcome {
  try {
    const reply = fn();
    const text = replyText(reply);
    return { status: reply.status, headers: reply.headers, body: text === undefined ? undefined : JSON.parse(text) };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { throws: [error.status, error.data.errorCode] };
  }
}

const JSON_HEADERS = { "content-type": "application/json" };

/** [what, flag key, body text, request headers, expected]. */
const single: [string, string, string, Record<string, string>, Outcome][] = [
  [
    "a targeted match",
    "checkout",
    body({ targetingKey: "u", plan: "pro" }),
    {},
    { status: 200, headers: JSON_HEADERS, body: { key: "checkout", value: true, variant: "on", reason: "TARGETING_MATCH", metadata: {} } },
  ],
  [
    "the default",
    "checkout",
    body({ plan: "free" }),
    {},
    { status: 200, headers: JSON_HEADERS, body: { key: "checkout", value: false, variant: "off", reason: "DEFAULT", metadata: {} } },
  ],
  [
    "an empty body",
    "checkout",
    "",
    {},
    { status: 200, headers: JSON_HEADERS, body: { key: "checkout", value: false, variant: "off", reason: "DEFAULT", metadata: {} } },
  ],
  ["a disabled flag", "off", "{}", {}, { status: 200, headers: JSON_HEADERS, body: { key: "off", reason: "DISABLED", metadata: {} } }],
  [
    "a header copied into the context",
    "banner",
    "{}",
    { "x-team": "a" },
    { status: 200, headers: JSON_HEADERS, body: { key: "banner", value: "red", variant: "red", reason: "TARGETING_MATCH", metadata: {} } },
  ],
  [
    "an evaluation error (no targeting key)",
    "split",
    "{}",
    {},
    {
      status: 400,
      headers: JSON_HEADERS,
      body: { key: "split", errorCode: "TARGETING_KEY_MISSING", errorDetails: expect.any(String), metadata: {} },
    },
  ],
  ["an unknown flag", "nope", "{}", {}, { throws: [404, "FLAG_NOT_FOUND"] }],
  ["invalid JSON, before the unknown flag", "nope", "{not json", {}, { throws: [400, "INVALID_CONTEXT"] }],
  ["a context that is not an object", "checkout", JSON.stringify({ context: 1 }), {}, { throws: [400, "INVALID_CONTEXT"] }],
  ["a bad session id", "checkout", "{}", { "x-flagserve-session": "bad id" }, { throws: [400, "INVALID_SESSION"] }],
];

describe("OfrepAnswerer.flag", () => {
  it.each(single)("%s", (_what, key, text, headers, expected) => {
    // Twice: the second answer comes from the cache, and must be the same.
    for (let i = 0; i < 2; i++) expect(run(() => answerer.flag(snapshot, key, text, new Headers(headers)))).toEqual(expected);
  });
});

const first = answerer.all(snapshot, body({ targetingKey: "u", plan: "pro" }), new Headers(), null);
const etag = first.headers.etag!;
const CACHE = { "cache-control": "private, no-cache" };

/** [what, body text, request headers, flagConfigEtag, expected status and headers]. */
const all: [
  string,
  string,
  Record<string, string>,
  string | null,
  { status: number; headers: Record<string, string> } | { throws: [number, string] },
][] = [
  ["a full answer", body({ targetingKey: "u", plan: "pro" }), {}, null, { status: 200, headers: { ...CACHE, ...JSON_HEADERS, etag } }],
  [
    "a revalidation that matches",
    body({ targetingKey: "u", plan: "pro" }),
    { "if-none-match": etag },
    null,
    { status: 304, headers: { ...CACHE, etag } },
  ],
  [
    "a weak revalidation among others",
    body({ targetingKey: "u", plan: "pro" }),
    { "if-none-match": `"x", W/${etag}` },
    null,
    { status: 304, headers: { ...CACHE, etag } },
  ],
  [
    "a revalidation of another answer",
    body({ targetingKey: "u", plan: "free" }),
    { "if-none-match": etag },
    null,
    { status: 200, headers: { ...CACHE, ...JSON_HEADERS, etag: expect.not.stringMatching(etag) } },
  ],
  [
    "a re-fetch naming the current configuration",
    body({ targetingKey: "u", plan: "pro" }),
    { "if-none-match": etag },
    snapshot.configEtag,
    { status: 304, headers: { ...CACHE, etag } },
  ],
  [
    "a re-fetch naming an older configuration: never a 304",
    body({ targetingKey: "u", plan: "pro" }),
    { "if-none-match": etag },
    '"older"',
    { status: 200, headers: { ...CACHE, ...JSON_HEADERS, etag } },
  ],
  ["invalid JSON", "{not json", {}, null, { throws: [400, "INVALID_CONTEXT"] }],
  ["a bad session id", "{}", { "x-flagserve-session": "bad id" }, null, { throws: [400, "INVALID_SESSION"] }],
];

describe("OfrepAnswerer.all", () => {
  it.each(all)("%s", (_what, text, headers, flagConfigEtag, expected) => {
    for (let i = 0; i < 2; i++) {
      const outcome = run(() => answerer.all(snapshot, text, new Headers(headers), flagConfigEtag));
      if ("throws" in expected) expect(outcome).toEqual(expected);
      else expect(outcome).toMatchObject(expected);
    }
  });

  it("lists every flag with the advertised event stream", () => {
    const answer = JSON.parse(replyText(first)!);
    expect(answer.flags.map((f: { key: string }) => f.key)).toEqual(["banner", "checkout", "off", "split"]);
    expect(answer.eventStreams).toEqual([{ type: "sse", endpoint: { requestUri: "/ofrep/v1/events?token=t" }, inactivityDelaySec: 120 }]);
  });

  it("records sessions and counts every evaluation, cached answers included", () => {
    const before = evaluations.render().join("\n");
    const headers = new Headers({ "x-flagserve-session": "table" });
    for (let i = 0; i < 3; i++) answerer.all(snapshot, body({ targetingKey: "u", plan: "pro" }), headers, null);
    expect(sessions.get("table").evaluations).toHaveLength(12);
    const count = (text: string) => Number(/flag="checkout",variant="on",reason="TARGETING_MATCH"} (\d+)/.exec(text)?.[1] ?? 0);
    expect(count(evaluations.render().join("\n")) - count(before)).toBe(3);
  });
});
