/** Request bodies: read from a real Node stream up to a limit, and read as JSON. Tables of cases. */
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJsonBody } from "../../src/evaluation/context.js";
import { ApiError } from "../../src/evaluation/problem.js";
import { readNodeBodyText } from "../../src/http/body.js";
import { DEV_KEY, startAdminFixture, type AdminFixture } from "../admin/helpers.js";

const LIMIT = 16;

/** A text's UTF-8 bytes cut at these byte offsets, as a socket may deliver them. */
const cut = (text: string, ...at: number[]): Buffer[] => {
  const bytes = Buffer.from(text);
  return [0, ...at].map((start, i) => bytes.subarray(start, [...at, bytes.length][i])).filter((piece) => piece.length > 0);
};

/** [what, chunks sent, declared Content-Length, text read or "413"]. */
const reads: [string, Buffer[], string | undefined, string][] = [
  ["no body", [], undefined, ""],
  ["one chunk", cut('{"a":1}'), "7", '{"a":1}'],
  ["several chunks, joined", cut('{"context":{}}', 5, 10), undefined, '{"context":{}}'],
  ["a multi-byte character split between chunks", cut("\u00e9t\u00e9", 1, 4), undefined, "\u00e9t\u00e9"],
  ["exactly the limit", cut("x".repeat(LIMIT)), String(LIMIT), "x".repeat(LIMIT)],
  ["one byte over the limit, declared", cut("x"), String(LIMIT + 1), "413"],
  ["over the limit, chunked (no length declared)", cut("x".repeat(20), 10), undefined, "413"],
  ["over the limit in bytes, not characters", cut("\u00e9".repeat(9)), undefined, "413"],
  ["a declared length that lies low", cut("x".repeat(LIMIT + 4)), "3", "413"],
];

describe("readNodeBodyText", () => {
  it.each(reads)("%s", async (_what, chunks, declared, expected) => {
    const read = readNodeBodyText(Readable.from(chunks), declared, LIMIT).then(
      (text) => text,
      (error: ApiError) => `${error.status} ${error.data.errorCode} ${error.data.errorDetails}`,
    );
    expect(await read).toBe(expected === "413" ? `413 PAYLOAD_TOO_LARGE request body exceeds ${LIMIT} bytes` : expected);
  });
});

/** [what, body text, parsed value, or the 400's details]. */
const parses: [string, string, { value: unknown } | { invalid: RegExp }][] = [
  ["empty", "", { value: undefined }],
  ["only white space", " \n\t", { value: undefined }],
  ["an object", '{"context":{"a":1}}', { value: { context: { a: 1 } } }],
  ["an array (not a body, but JSON: contextFromBody refuses it)", "[1]", { value: [1] }],
  ["a JSON string", '"x"', { value: "x" }],
  ["not JSON", "{not json", { invalid: /^request body is not valid JSON: / }],
  ["cut short", '{"context":', { invalid: /^request body is not valid JSON: / }],
  [
    "nested 128 levels deep, as deep as a flag file may be",
    `{"context":{"a":${"[".repeat(126)}${"]".repeat(126)}}}`,
    { value: expect.anything() },
  ],
  [
    "nested deeper than 128 levels (as a file may not be)",
    `{"context":{"a":${"[".repeat(127)}${"]".repeat(127)}}}`,
    { invalid: /^request body nests deeper than 128 levels of objects and arrays$/ },
  ],
];

describe("parseJsonBody", () => {
  it.each(parses)("%s", (_what, text, expected) => {
    if ("value" in expected) return expect(parseJsonBody(text, "flag")).toEqual(expected.value);
    let thrown: unknown;
    try {
      parseJsonBody(text, "flag");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    const { status, data } = thrown as ApiError;
    expect(status).toBe(400);
    expect(data).toMatchObject({ key: "flag", errorCode: "INVALID_CONTEXT" });
    expect(data.errorDetails).toMatch(expected.invalid);
  });
});

describe("a body nested too deep, over HTTP", () => {
  let fixture: AdminFixture;
  beforeAll(async () => {
    fixture = await startAdminFixture();
  });
  afterAll(() => fixture?.close());
  const deep = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

  it("an OFREP context recorded for X-Flagserve-Session: 400 with the nesting message, not a 500", async () => {
    for (const path of ["/ofrep/v1/evaluate/flags/banner", "/ofrep/v1/evaluate/flags"]) {
      const response = await fetch(`${fixture.server.url}${path}`, {
        method: "POST",
        headers: { "x-api-key": DEV_KEY, "x-flagserve-session": "deep" },
        body: `{"context":{"a":${deep(20_000)}}}`,
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        errorCode: "INVALID_CONTEXT",
        errorDetails: "request body nests deeper than 128 levels of objects and arrays",
      });
    }
    // A context as deep as a flag file may be is recorded.
    const kept = await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags/banner`, {
      method: "POST",
      headers: { "x-api-key": DEV_KEY, "x-flagserve-session": "deep" },
      body: `{"context":{"a":${deep(126)}}}`,
    });
    expect(kept.status).toBe(200);
    expect(fixture.server.session("deep").evaluations).toHaveLength(1);
  });

  it("an admin body (PUT override, the playground, PATCH): 400 INVALID_REQUEST with the nesting message", async () => {
    for (const [method, path] of [
      ["PUT", "/environments/dev/overrides/banner"],
      ["POST", "/environments/dev/evaluate"],
      ["PATCH", "/environments/dev/flags/banner"],
    ] as const) {
      const response = await fixture.admin(path, { method, body: `{"variant":${deep(20_000)}}` });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        errorCode: "INVALID_REQUEST",
        errorDetails: "request body nests deeper than 128 levels of objects and arrays",
      });
    }
  });
});
