/** Evaluate-all answers are computed once per (snapshot, request body) and reused only while right. */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { compileEnvironment } from "../../src/engine/compile.js";
import { bulkItem } from "../../src/evaluation/ofrep-bodies.js";
import { createBulkAnswers } from "../../src/answers/bulk.js";
import { createSnapshot } from "../../src/store/snapshot.js";
import { env } from "../engine/helpers.js";

const snapshotOf = (flags: Parameters<typeof env>[0]["flags"]) => {
  const config = env({ flags });
  return createSnapshot({ ...config, name: "dev" }, compileEnvironment(config).flags, "dev-key-0123456789");
};

const byPlan = {
  variants: { on: true, off: false },
  defaultVariant: "off",
  targeting: { if: [{ "==": [{ var: "plan" }, "pro"] }, "on", "off"] },
};
const byClock = {
  variants: { even: "even", odd: "odd" },
  defaultVariant: "odd",
  targeting: { if: [{ "==": [{ "%": [{ var: "$flagd.timestamp" }, 2] }, 0] }, "even", "odd"] },
};
const request = (context: object) => JSON.stringify({ context });

/** An answerer and the number of times it had to read a context (one per evaluation). */
function counted(options: Parameters<typeof createBulkAnswers>[0] = {}) {
  const answer = createBulkAnswers(options);
  let evaluations = 0;
  return {
    answer: (snapshot: ReturnType<typeof snapshotOf>, context: object, nowMs = 1_700_000_000_000) =>
      answer(snapshot, "", request(context), () => (evaluations++, context as Record<string, unknown>), nowMs),
    get evaluations() {
      return evaluations;
    },
  };
}

const flagsOf = (body: string) => JSON.parse(body).flags as { key: string; variant?: string }[];

describe("createBulkAnswers", () => {
  it("keeps a request's answer from its second time on, per snapshot", () => {
    const bulk = counted();
    const first = snapshotOf({ f: byPlan });
    const a = bulk.answer(first, { plan: "pro" });
    const b = bulk.answer(first, { plan: "pro" }); // the second time: computed again, and kept
    expect(bulk.evaluations).toBe(2);
    expect(b).toEqual(a);
    expect(bulk.answer(first, { plan: "pro" })).toBe(b);
    expect(bulk.answer(first, { plan: "pro" })).toBe(b);
    expect(bulk.evaluations).toBe(2);
    expect(flagsOf(a.bytes.toString())).toMatchObject([{ key: "f", variant: "on" }]);

    const second = snapshotOf({ f: { ...byPlan, targeting: { if: [{ "==": [{ var: "plan" }, "pro"] }, "off", "on"] } } });
    const c = bulk.answer(second, { plan: "pro" });
    expect(bulk.evaluations).toBe(3);
    expect(flagsOf(c.bytes.toString())).toMatchObject([{ key: "f", variant: "off" }]);
    expect(c.etag).not.toBe(a.etag);
  });

  it("tags an answer with the hash of the configuration version and the exact body, by its parts (etag.ts)", () => {
    const snapshot = snapshotOf({ f: byPlan, s: { variants: { on: true }, defaultVariant: "on" }, g: { ...byPlan, state: "DISABLED" } });
    const sha256 = (text: string) => createHash("sha256").update(text).digest();
    const tags = new Set<string>();
    for (const plan of ["pro", "free", "pro"]) {
      const { bytes, etag } = counted().answer(snapshot, { plan });
      // The body taken apart again: its items, and the tail after the flags array.
      const body = bytes.toString();
      const items = (JSON.parse(body).flags as unknown[]).map((item) => JSON.stringify(item));
      const head = `{"flags":[${items.join(",")}`;
      expect(body.startsWith(head)).toBe(true);
      const parts = [body.slice(head.length), ...items].map((part) => sha256(part).subarray(0, 16));
      const expected = createHash("sha256")
        .update(Buffer.concat([...parts, Buffer.from(snapshot.configEtag)]))
        .digest("base64url")
        .slice(0, 27);
      expect(etag).toBe(`"${expected}"`);
      tags.add(etag);
    }
    expect(tags.size).toBe(2);
  });

  it("writes every item as JSON.stringify would, for flags with many variants and for errors", () => {
    // 24 variants picked by the context: more outcomes than are remembered per flag.
    const variants = Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`v${i}`, { n: i, label: `ü${i}` }]));
    const byVar = { variants, defaultVariant: "v0", targeting: { var: "pick" } };
    const snapshot = snapshotOf({ a: byVar, b: byPlan });
    const bulk = counted({ cacheBytes: 0 });
    // Errors that quote the context: each one's own item, the same one again when it comes back.
    for (const pick of [...Object.keys(variants), ...Object.keys(variants), "missing", "gone", "missing"]) {
      const { bytes, outcomes } = bulk.answer(snapshot, { pick, plan: "pro" });
      const item =
        pick in variants
          ? { key: "a", value: variants[pick], reason: "TARGETING_MATCH", variant: pick }
          : { key: "a", errorCode: "GENERAL", errorDetails: expect.stringContaining(`"${pick}"`) };
      expect(JSON.parse(bytes.toString()).flags[0]).toMatchObject(item);
      expect(bytes.toString()).toBe(JSON.stringify({ flags: outcomes.map(bulkItem), metadata: snapshot.config.metadata }));
    }
  });

  it("gives different contexts their own answers", () => {
    const bulk = counted();
    const snapshot = snapshotOf({ f: byPlan });
    expect(flagsOf(bulk.answer(snapshot, { plan: "pro" }).bytes.toString())[0]!.variant).toBe("on");
    expect(flagsOf(bulk.answer(snapshot, { plan: "free" }).bytes.toString())[0]!.variant).toBe("off");
    expect(bulk.evaluations).toBe(2);
  });

  it("reuses an answer that reads the clock only within the same second", () => {
    const bulk = counted();
    const snapshot = snapshotOf({ f: byPlan, t: byClock });
    const even = bulk.answer(snapshot, { plan: "pro" }, 1_700_000_000_000);
    expect(bulk.answer(snapshot, { plan: "pro" }, 1_700_000_000_500).etag).toBe(even.etag); // kept from here
    expect(bulk.answer(snapshot, { plan: "pro" }, 1_700_000_000_999).etag).toBe(even.etag);
    expect(bulk.evaluations).toBe(2);
    const odd = bulk.answer(snapshot, { plan: "pro" }, 1_700_000_001_000);
    expect(bulk.evaluations).toBe(3);
    expect(bulk.answer(snapshot, { plan: "pro" }, 1_700_000_001_001)).toBe(odd); // the kept answer replaced at once
    expect(bulk.evaluations).toBe(3);
    expect(flagsOf(even.bytes.toString()).find((f) => f.key === "t")!.variant).toBe("even");
    expect(flagsOf(odd.bytes.toString()).find((f) => f.key === "t")!.variant).toBe("odd");
    expect(odd.etag).not.toBe(even.etag);
  });

  it("keeps clock-free answers whatever the time", () => {
    const bulk = counted();
    const snapshot = snapshotOf({ f: byPlan, s: { variants: { on: true }, defaultVariant: "on" } });
    bulk.answer(snapshot, { plan: "pro" }, 1_700_000_000_000);
    bulk.answer(snapshot, { plan: "pro" }, 1_700_000_500_000);
    bulk.answer(snapshot, { plan: "pro" }, 1_700_001_000_000);
    expect(bulk.evaluations).toBe(2);
  });

  it("stays within its byte budget, evicting the least recently used, and answers the same after", () => {
    const snapshot = snapshotOf({ f: byPlan });
    const one = counted().answer(snapshot, { plan: "pro", n: 0 });
    // Room for about two answers (and for a request's first time to be remembered meanwhile).
    const bulk = counted({ cacheBytes: 2 * (one.bytes.length + 2 * request({ plan: "pro", n: 0 }).length + 132) + 10 });
    const twice = (n: number) => (bulk.answer(snapshot, { plan: "pro", n }), bulk.answer(snapshot, { plan: "pro", n }));
    const answers = [0, 1, 2].map(twice);
    expect(bulk.evaluations).toBe(6);
    bulk.answer(snapshot, { plan: "pro", n: 2 }); // kept
    bulk.answer(snapshot, { plan: "pro", n: 1 }); // kept
    expect(bulk.evaluations).toBe(6);
    expect(bulk.answer(snapshot, { plan: "pro", n: 0 })).toEqual(answers[0]); // evicted, recomputed identically
    expect(bulk.evaluations).toBe(7);
  });

  it("does not keep answers with the cache turned off, and answers the same", () => {
    const bulk = counted({ cacheBytes: 0 });
    const snapshot = snapshotOf({ f: byPlan });
    const a = bulk.answer(snapshot, { plan: "pro" });
    expect(bulk.answer(snapshot, { plan: "pro" })).toEqual(a);
    expect(bulk.evaluations).toBe(2);
  });
});
