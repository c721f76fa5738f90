import { describe, expect, it } from "vitest";
import type { Change } from "../../src/model/change.js";
import { Channel, type Subscriber } from "../../src/events/channel.js";
import { encodeEvent, eventsFor } from "../../src/events/encode.js";
import type { SseFrame } from "../../src/events/frame.js";

const T = "2026-11-21T00:00:00.000Z";
const changes: Change[] = [
  { kind: "flag", key: "a", change: "created" },
  { kind: "flag", key: "b", change: "deleted" },
  { kind: "segment", key: "s", change: "updated" },
  { kind: "segment", key: "t", change: "created" },
  { kind: "api-key", change: "updated" },
];

describe("encodeEvent", () => {
  it("writes event, data, id in that order and ends with a blank line", () => {
    expect(encodeEvent({ name: "flag-updated", data: '{"flagKey":"a"}', id: 12 })).toBe(
      'event: flag-updated\ndata: {"flagKey":"a"}\nid: 12\n\n',
    );
    expect(encodeEvent({ name: "heartbeat", data: "{}" })).toBe("event: heartbeat\ndata: {}\n\n");
    expect(encodeEvent({ data: "{}" })).toBe("data: {}\n\n");
  });
});

describe("eventsFor", () => {
  it("maps changes to the primary set: one per flag, one segment-modified, api-key-rotated twice (spec, then Flipswitch)", () => {
    const until = "2026-01-01T01:00:00.000Z";
    expect(eventsFor(changes, "primary", T, until)).toEqual([
      { name: "flag-updated", data: `{"flagKey":"a","timestamp":"${T}"}` },
      { name: "flag-updated", data: `{"flagKey":"b","timestamp":"${T}"}` },
      { name: "config-updated", data: `{"reason":"segment-modified","timestamp":"${T}"}` },
      { name: "config-updated", data: `{"reason":"api-key-rotated","timestamp":"${T}"}` },
      { name: "api-key-rotated", data: `{"validUntil":"${until}","timestamp":"${T}"}` },
    ]);
    // Without a grace period the old key is valid until now.
    expect(eventsFor(changes, "primary", T).at(-1)).toEqual({ name: "api-key-rotated", data: `{"validUntil":"${T}","timestamp":"${T}"}` });
  });

  it("maps changes to the variant set: flag-change, null for segments", () => {
    expect(eventsFor(changes, "variant", T)).toEqual([
      { name: "flag-change", data: `{"flagKey":"a","timestamp":"${T}"}` },
      { name: "flag-change", data: `{"flagKey":"b","timestamp":"${T}"}` },
      { name: "flag-change", data: `{"flagKey":null,"timestamp":"${T}"}` },
    ]);
  });
});

describe("Channel", () => {
  const recorder = (): Subscriber & { text: string; closed: boolean } => {
    const s = {
      text: "",
      closed: false,
      keyDigest: "k",
      ip: "127.0.0.1",
      send: (f: SseFrame) => void (s.text += f.text),
      close: () => void (s.closed = true),
    };
    return s;
  };
  const ids = (text: string) => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));

  it("gives strictly increasing epoch-millisecond ids, even within one millisecond", () => {
    const channel = new Channel();
    const s = recorder();
    channel.subscribe(s);
    const before = Date.now();
    for (let i = 0; i < 50; i++)
      channel.publish([
        { name: "x", data: "{}" },
        { name: "y", data: "{}" },
      ]);
    const seen = ids(s.text);
    expect(seen).toHaveLength(100);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]!);
    expect(seen[0]).toBeGreaterThanOrEqual(before);
  });

  it("sends the same encoded text to every subscriber", () => {
    const channel = new Channel();
    const [a, b] = [recorder(), recorder()];
    channel.subscribe(a);
    channel.subscribe(b);
    channel.publish([{ name: "x", data: "{}" }]);
    expect(a.text).toBe(b.text);
    expect(a.text).toMatch(/^event: x\ndata: \{\}\nid: \d+\n\n$/);
  });

  it("replays events newer than Last-Event-ID, within its bound", () => {
    const channel = new Channel(3);
    const first = recorder();
    channel.subscribe(first);
    for (let i = 0; i < 5; i++) channel.publish([{ name: `e${i}`, data: "{}" }]);
    const all = ids(first.text);
    const late = recorder();
    channel.subscribe(late, all[2]);
    expect(ids(late.text)).toEqual(all.slice(3));
    const behind = recorder();
    channel.subscribe(behind, 0);
    expect(ids(behind.text)).toEqual(all.slice(2)); // only 3 kept
  });

  it("closes the subscribers a predicate picks", () => {
    const channel = new Channel();
    const [a, b] = [recorder(), { ...recorder(), keyDigest: "other" }];
    channel.subscribe(a);
    channel.subscribe(b);
    expect(channel.closeWhere((s) => s.keyDigest === "k")).toBe(1);
    expect(a.closed).toBe(true);
    channel.publish([{ name: "x", data: "{}" }]);
    expect(a.text).toBe("");
  });
});
