/** Delivery against a real loopback receiver: timeouts, bounded retries, backoff, redaction. */
import { afterEach, describe, expect, it } from "vitest";
import { deliver, parseRetryAfter, redactUrl, type DeliveryOptions } from "../../src/notify/deliver.js";
import type { Logger } from "../../src/log/logger.js";
import { startReceiver, type Receiver } from "./receiver.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const SECRET_PATH = "/services/T000/B000/XXXXSECRET";

function recorder() {
  const lines: string[] = [];
  const logger: Logger = {
    info: (m) => lines.push(`info: ${m}`),
    warn: (m) => lines.push(`warn: ${m}`),
    error: (m) => lines.push(`error: ${m}`),
  };
  return { lines, logger };
}

async function setup() {
  const receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  const log = recorder();
  const request = {
    url: `${receiver.url}${SECRET_PATH}`,
    body: '{"text":"hi"}',
    headers: { "content-type": "application/json", "x-test": "1" },
  };
  const options = (more: Partial<DeliveryOptions> = {}): DeliveryOptions => ({
    logger: log.logger,
    label: "dev: slack notification",
    backoffMs: 10,
    ...more,
  });
  return { receiver, log, request, options };
}

describe("deliver", () => {
  it("POSTs the body and headers once when the receiver says 2xx", async () => {
    const { receiver, log, request, options } = await setup();
    expect(await deliver(request, options())).toEqual({ ok: true, attempts: 1, status: 200 });
    expect(receiver.received).toHaveLength(1);
    const [got] = receiver.received;
    expect(got!.method).toBe("POST");
    expect(got!.path).toBe(SECRET_PATH);
    expect(got!.raw.toString()).toBe('{"text":"hi"}');
    expect(got!.headers).toMatchObject({ "content-type": "application/json", "x-test": "1" });
    expect(log.lines).toEqual(["info: dev: slack notification sent"]);
  });

  it("retries a 500 with the same request, then succeeds", async () => {
    const { receiver, log, request, options } = await setup();
    receiver.replies.push({ status: 500, body: "boom" });
    expect(await deliver(request, options())).toEqual({ ok: true, attempts: 2, status: 200 });
    expect(receiver.received.map((r) => r.raw.toString())).toEqual([request.body, request.body]);
    expect(log.lines).toEqual([
      "warn: dev: slack notification failed: HTTP 500 boom (attempt 1 of 3, retrying in 10 ms)",
      "info: dev: slack notification sent (attempt 2)",
    ]);
  });

  it("backs off exponentially and gives up after the bounded number of attempts", async () => {
    const { receiver, log, request, options } = await setup();
    receiver.replies.push(...Array(10).fill({ status: 502 }));
    expect(await deliver(request, options({ attempts: 4 }))).toEqual({ ok: false, attempts: 4, status: 502 });
    expect(receiver.received).toHaveLength(4);
    expect(log.lines).toEqual([
      "warn: dev: slack notification failed: HTTP 502 (attempt 1 of 4, retrying in 10 ms)",
      "warn: dev: slack notification failed: HTTP 502 (attempt 2 of 4, retrying in 20 ms)",
      "warn: dev: slack notification failed: HTTP 502 (attempt 3 of 4, retrying in 40 ms)",
      "error: dev: slack notification failed: HTTP 502 (gave up after 4 attempts)",
    ]);
    for (const i of [1, 2, 3])
      expect(receiver.received[i]!.at - receiver.received[i - 1]!.at).toBeGreaterThanOrEqual(10 * 2 ** (i - 1) - 2);
  });

  it("honours Retry-After on 429, capped", async () => {
    const { receiver, log, request, options } = await setup();
    receiver.replies.push({ status: 429, headers: { "retry-after": "0" } }, { status: 429, headers: { "retry-after": "120" } });
    expect(await deliver(request, options({ maxRetryAfterMs: 30 }))).toMatchObject({ ok: true, attempts: 3 });
    expect(log.lines.slice(0, 2)).toEqual([
      "warn: dev: slack notification failed: HTTP 429 (attempt 1 of 3, retrying in 0 ms)",
      "warn: dev: slack notification failed: HTTP 429 (attempt 2 of 3, retrying in 30 ms)",
    ]);
  });

  it("does not retry other 4xx answers or redirects", async () => {
    const { receiver, log, request, options } = await setup();
    receiver.replies.push({ status: 400, body: "invalid_payload" }, { status: 302, headers: { location: "/elsewhere" } });
    expect(await deliver(request, options())).toEqual({ ok: false, attempts: 1, status: 400 });
    expect(await deliver(request, options())).toEqual({ ok: false, attempts: 1, status: 302 });
    expect(receiver.received).toHaveLength(2);
    expect(log.lines).toEqual([
      "error: dev: slack notification failed: HTTP 400 invalid_payload",
      "error: dev: slack notification failed: HTTP 302",
    ]);
  });

  it("times out a receiver that never answers, and retries", async () => {
    const { receiver, log, request, options } = await setup();
    receiver.replies.push("hang", "hang");
    const started = Date.now();
    // Long enough for each request to reach the receiver on a slow machine before it times out.
    expect(await deliver(request, options({ timeoutMs: 500, attempts: 2 }))).toEqual({ ok: false, attempts: 2 });
    expect(Date.now() - started).toBeLessThan(5000); // the default timeout (5 s) would take twice that
    expect(receiver.received).toHaveLength(2);
    expect(log.lines.at(-1)).toBe("error: dev: slack notification failed: no answer within 500 ms (gave up after 2 attempts)");
  });

  it("retries network errors, logging the cause and only the URL's origin", async () => {
    const { receiver, log, request, options } = await setup();
    await receiver.close();
    expect(await deliver(request, options({ attempts: 2 }))).toEqual({ ok: false, attempts: 2 });
    expect(log.lines).toEqual([
      "warn: dev: slack notification failed: ECONNREFUSED (attempt 1 of 2, retrying in 10 ms)",
      "error: dev: slack notification failed: ECONNREFUSED (gave up after 2 attempts)",
    ]);
    expect(log.lines.join("\n")).not.toContain("SECRET");
  });

  it("stops at once when the shutdown signal fires, mid-request or mid-wait", async () => {
    const { receiver, log, request, options } = await setup();
    receiver.replies.push("hang", { status: 500 });
    const shutdown = new AbortController();
    const pending = deliver(request, options({ signal: shutdown.signal, timeoutMs: 10_000 }));
    await receiver.waitFor(1);
    shutdown.abort();
    expect(await pending).toEqual({ ok: false, attempts: 1 });
    expect(log.lines).toEqual(["error: dev: slack notification failed: cancelled at shutdown"]);

    const waiting = new AbortController();
    const retrying = deliver(request, options({ signal: waiting.signal, backoffMs: 10_000 }));
    await receiver.waitFor(2);
    setTimeout(() => waiting.abort(), 20);
    expect(await retrying).toEqual({ ok: false, attempts: 1, status: 500 });
    expect(log.lines.at(-1)).toBe("error: dev: slack notification dropped: shutting down before retry 2");
  });
});

describe("redactUrl and parseRetryAfter", () => {
  it("keeps only the origin of a URL", () => {
    expect(redactUrl("https://hooks.slack.com/services/T/B/secret?x=1")).toBe("https://hooks.slack.com");
    expect(redactUrl("http://user:pw@127.0.0.1:8080/hook")).toBe("http://127.0.0.1:8080");
    expect(redactUrl("not a url")).toBe("(invalid URL)");
  });

  it("reads delay-seconds and HTTP dates", () => {
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter("7")).toBe(7000);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:10 GMT", Date.parse("Wed, 21 Oct 2015 07:28:00 GMT"))).toBe(10_000);
    expect(parseRetryAfter("soon")).toBeUndefined();
  });
});
