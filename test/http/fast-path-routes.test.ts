/**
 * Which requests the node:http fast path takes and which it leaves to h3, by request target:
 * a table of cases. Everything it takes, h3 routes the same way (test/e2e/fast-path*.test.ts
 * compares the answers); everything else goes to h3 untouched.
 */
import { describe, expect, it } from "vitest";
import { targetOf } from "../../src/http/fast-path.js";

const ALL = "/ofrep/v1/evaluate/flags";
const FLAG = "/ofrep/v1/evaluate/flags/:key";
const EVENTS = "/api/v1/flags/events";
const OFREP_EVENTS = "/ofrep/v1/events";

/** [request target, route taken with its key or query (undefined: left to h3)]. */
const cases: [string, { route: string; method: string; key?: string; flagConfigEtag?: string | null; query?: string } | undefined][] = [
  [ALL, { route: ALL, method: "POST", flagConfigEtag: null }],
  [`${ALL}?flagConfigEtag=%22v1%22`, { route: ALL, method: "POST", flagConfigEtag: '"v1"' }],
  [`${ALL}?other=1`, { route: ALL, method: "POST", flagConfigEtag: null }],
  [`${ALL}/checkout`, { route: FLAG, method: "POST", key: "checkout" }],
  [`${ALL}/team%2Fbanner`, { route: FLAG, method: "POST", key: "team/banner" }],
  [`${ALL}/a.b_c-d~e`, { route: FLAG, method: "POST", key: "a.b_c-d~e" }],
  [`${ALL}/with%20space`, { route: FLAG, method: "POST", key: "with space" }],
  [`${ALL}/caf%C3%A9`, { route: FLAG, method: "POST", key: "caf\u00e9" }],
  [`${ALL}/checkout?x=1`, { route: FLAG, method: "POST", key: "checkout" }],
  [EVENTS, { route: EVENTS, method: "GET" }],
  [`${EVENTS}?lastEventId=3`, { route: EVENTS, method: "GET", query: "lastEventId=3" }],
  [`${OFREP_EVENTS}?token=t`, { route: OFREP_EVENTS, method: "GET", query: "token=t" }],
  // Left to h3: paths it reads differently (or that name no route here).
  [`${ALL}/`, undefined], // the empty key: h3 answers 404 FLAG_NOT_FOUND
  [`${ALL}/a/b`, undefined],
  [`${ALL}/..`, undefined],
  [`${ALL}/%2e%2e`, undefined],
  [`${ALL}/.`, undefined],
  [`${ALL}/%E0%A4%A`, undefined], // not valid percent-encoding
  [`${ALL}/a"b`, undefined],
  [`${ALL}/a%`, undefined],
  [`${ALL}//checkout`, undefined],
  [`${ALL}/`.toUpperCase(), undefined],
  ["/ofrep/v1/evaluate/flag", undefined],
  ["/metrics", undefined],
  ["/", undefined],
  ["*", undefined],
  ["http://example.com/ofrep/v1/evaluate/flags", undefined],
];

describe("targetOf", () => {
  it.each(cases)("%s", (url, expected) => {
    const target = targetOf(url);
    if (expected === undefined) return expect(target).toBeUndefined();
    expect(target).toMatchObject({ route: expected.route, method: expected.method, key: expected.key });
    if ("flagConfigEtag" in expected) expect(target!.flagConfigEtag).toBe(expected.flagConfigEtag);
    if (expected.route === EVENTS || expected.route === OFREP_EVENTS) {
      expect(target!.stream).toBe(expected.route === EVENTS ? "events" : "ofrep");
      expect(target!.query?.toString()).toBe(expected.query);
    }
  });
});
