/** The notifier with snapshots built in memory and a real loopback receiver. */
import { afterEach, describe, expect, it } from "vitest";
import { diffEnvironments } from "../../src/changes/diff.js";
import type { EnvironmentChange } from "../../src/changes/reload.js";
import type { EnvironmentConfig, FlagDefinition, NotificationTarget } from "../../src/model/types.js";
import type { Logger } from "../../src/log/logger.js";
import { createNotifier, type NotifierOptions } from "../../src/notify/notifier.js";
import { createSnapshot, type EnvironmentSnapshot } from "../../src/store/snapshot.js";
import { startReceiver, type Receiver } from "./receiver.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const flag = (defaultVariant: string, more: Partial<FlagDefinition> = {}): FlagDefinition => ({
  state: "ENABLED",
  variants: { on: true, off: false },
  defaultVariant,
  metadata: {},
  ...more,
});

const snapshot = (config: Partial<EnvironmentConfig>, apiKey = "key-1"): EnvironmentSnapshot =>
  createSnapshot({ name: "dev", metadata: {}, segments: {}, flags: {}, notifications: [], files: [], ...config }, new Map(), apiKey);

/** What applyLoad would report going from `before` to `after`. */
const change = (before: EnvironmentSnapshot | undefined, after: EnvironmentSnapshot | undefined): EnvironmentChange => ({
  env: (after ?? before)!.name,
  changes: diffEnvironments(before, after),
  before,
  after,
});

async function setup(more: Partial<NotifierOptions> = {}) {
  const receiver = await startReceiver();
  const lines: string[] = [];
  const logger: Logger = { info: (m) => lines.push(m), warn: (m) => lines.push(`warn: ${m}`), error: (m) => lines.push(`error: ${m}`) };
  const notifier = createNotifier({
    logger,
    coalesceMs: 50,
    delivery: { backoffMs: 10, timeoutMs: 2000 },
    now: () => new Date("2025-01-02T03:04:05.000Z"),
    ...more,
  });
  cleanups.push(
    () => receiver.close(),
    () => notifier.close(),
  );
  const hook = (path = "/hook", extra: Partial<NotificationTarget> = {}): NotificationTarget => ({
    type: "webhook",
    url: `${receiver.url}${path}`,
    ...extra,
  });
  return { receiver, lines, notifier, hook };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("createNotifier", () => {
  it("coalesces a window's changes into one message, folding each flag from first before to last after", async () => {
    const { receiver, notifier, hook } = await setup();
    const notifications = [hook()];
    const v1 = snapshot({ notifications, flags: { a: flag("off"), b: flag("on") } });
    const v2 = snapshot({ notifications, flags: { a: flag("on"), b: flag("on") } });
    const v3 = snapshot({ notifications, flags: { a: flag("on", { state: "DISABLED" }), c: flag("off") } });
    notifier.onChanges([change(v1, v2)]);
    notifier.onChanges([change(v2, v3)]);
    const [got] = await receiver.waitFor(1);
    expect(got!.json()).toEqual({
      environment: "dev",
      timestamp: "2025-01-02T03:04:05.000Z",
      changes: [
        { type: "flag", key: "a", change: "updated", details: ["state: ENABLED -> DISABLED", "defaultVariant: off -> on"] },
        { type: "flag", key: "b", change: "deleted", details: [] },
        { type: "flag", key: "c", change: "created", details: ["variants: on, off", "defaultVariant: off"] },
      ],
    });
    await pause(100);
    expect(receiver.received).toHaveLength(1);
  });

  it("sends nothing for an edit undone, or a flag created and deleted, within the window", async () => {
    const { receiver, notifier, hook } = await setup();
    const notifications = [hook()];
    const v1 = snapshot({ notifications, flags: { a: flag("off") } });
    const v2 = snapshot({ notifications, flags: { a: flag("on"), tmp: flag("on") } });
    notifier.onChanges([change(v1, v2)]);
    notifier.onChanges([change(v2, v1)]);
    await pause(150);
    expect(receiver.received).toHaveLength(0);
  });

  it("sends to the latest targets, each through its events filter", async () => {
    const { receiver, notifier, hook } = await setup();
    const v1 = snapshot({ notifications: [hook("/old")], flags: { a: flag("off") } });
    const targets = [
      hook("/flags", { events: ["flag-updated"] }),
      hook("/segments", { events: ["segment-created"] }),
      hook("/keys", { events: ["api-key-rotated"] }),
      { type: "slack" as const, url: `${receiver.url}/slack` },
    ];
    const v2 = snapshot({ notifications: targets, flags: { a: flag("on") } }, "key-2");
    notifier.onChanges([change(v1, v2)]);
    await receiver.waitFor(3);
    await pause(100);
    const byPath = Object.fromEntries(receiver.received.map((r) => [r.path, r.json()]));
    expect(Object.keys(byPath).sort()).toEqual(["/flags", "/keys", "/slack"]);
    expect(byPath["/flags"].changes).toEqual([{ type: "flag", key: "a", change: "updated", details: ["defaultVariant: off -> on"] }]);
    expect(byPath["/keys"].changes).toEqual([{ type: "api-key", key: null, change: "rotated", details: [] }]);
    expect(byPath["/slack"].text).toBe("flagserve: 2 changes in dev\n• flag a updated: defaultVariant: off -&gt; on\n• API key rotated");
    expect(JSON.stringify(receiver.received.map((r) => r.raw.toString()))).not.toMatch(/key-[12]/);
  });

  it("says metadata changed for every flag when the flag-set metadata changes", async () => {
    const { receiver, notifier, hook } = await setup();
    const notifications = [hook()];
    const v1 = snapshot({ notifications, metadata: { version: 1 }, flags: { a: flag("off"), b: flag("on") } });
    const v2 = snapshot({ notifications, metadata: { version: 2 }, flags: { a: flag("off"), b: flag("on") } });
    notifier.onChanges([change(v1, v2)]);
    const [got] = await receiver.waitFor(1);
    expect(got!.json().changes).toEqual([
      { type: "flag", key: "a", change: "updated", details: ["metadata changed"] },
      { type: "flag", key: "b", change: "updated", details: ["metadata changed"] },
    ]);
  });

  it("announces a removed environment to the targets it had", async () => {
    const { receiver, notifier, hook } = await setup();
    const v1 = snapshot({ notifications: [hook()], flags: { a: flag("off") }, segments: { s: true } });
    notifier.onChanges([change(v1, undefined)]);
    const [got] = await receiver.waitFor(1);
    expect(got!.json().changes).toEqual([
      { type: "flag", key: "a", change: "deleted", details: [] },
      { type: "segment", key: "s", change: "deleted", details: [] },
    ]);
  });

  it("returns at once and never throws, and ignores environments without targets", async () => {
    const { receiver, notifier, lines } = await setup();
    const v1 = snapshot({ flags: { a: flag("off") } });
    const v2 = snapshot({ flags: { a: flag("on") } });
    expect(() => notifier.onChanges([change(v1, v2)])).not.toThrow();
    expect(() => notifier.onChanges([{ env: "x", changes: null } as unknown as EnvironmentChange])).not.toThrow();
    await pause(100);
    expect(receiver.received).toHaveLength(0);
    expect(lines.filter((l) => l.startsWith("error:"))).toHaveLength(0);
    expect(() => notifier.onChanges(null as unknown as EnvironmentChange[])).not.toThrow();
    expect(lines.some((l) => l.startsWith("error: notifications:"))).toBe(true);
  });

  it("keeps messages to one receiver in order while it is retried", async () => {
    // Retries at +0, +100 and +300 ms; the second window is sent at about +130 ms, in between.
    const { receiver, notifier, hook } = await setup({ delivery: { backoffMs: 100 } });
    receiver.replies.push({ status: 500 }, { status: 500 });
    const notifications = [hook()];
    const v1 = snapshot({ notifications, flags: { a: flag("off") } });
    const v2 = snapshot({ notifications, flags: { a: flag("on") } });
    notifier.onChanges([change(v1, v2)]);
    await pause(80); // first window sent (and failing); the next one queues behind it
    notifier.onChanges([change(v2, v1)]);
    const got = await receiver.waitFor(4);
    expect(got.map((r) => r.json().changes[0].details[0])).toEqual([
      "defaultVariant: off -> on",
      "defaultVariant: off -> on",
      "defaultVariant: off -> on",
      "defaultVariant: on -> off",
    ]);
  });

  it("sends pending windows at close, and drops what a hanging receiver holds after the deadline", async () => {
    // The deadline leaves a slow machine time to deliver /b and to get /a to the receiver (both
    // sent only at close); what is proven is that close does not wait out /a's 60 s delivery timeout.
    const { receiver, notifier, hook, lines } = await setup({ coalesceMs: 60_000, closeTimeoutMs: 1000, delivery: { timeoutMs: 60_000 } });
    receiver.replies.push("hang");
    const notifications = [hook("/a"), hook("/b")];
    const v1 = snapshot({ notifications, flags: { a: flag("off") } });
    const v2 = snapshot({ notifications, flags: { a: flag("on") } });
    notifier.onChanges([change(v1, v2)]);
    const started = Date.now();
    await notifier.close();
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(receiver.received.map((r) => r.path).sort()).toEqual(["/a", "/b"]);
    expect(lines).toContain("warn: notifications: 1 message(s) not delivered within 1000 ms of shutdown, dropped");
    notifier.onChanges([change(v2, v1)]);
    await pause(50);
    expect(receiver.received).toHaveLength(2);
  });
});
