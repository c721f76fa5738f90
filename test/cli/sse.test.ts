/** The SSE parser under `flagserve events`: the WHATWG rules, whatever the chunking. */
import { describe, expect, it } from "vitest";
import { SseParser } from "../../src/cli/sse.js";

/** Feeds `text` in pieces of `size` characters and collects the messages. */
function parse(text: string, size = text.length) {
  const parser = new SseParser();
  const messages = [];
  for (let i = 0; i < text.length; i += size) messages.push(...parser.push(text.slice(i, i + size)));
  return { messages, parser };
}

describe("SseParser", () => {
  const stream =
    "\uFEFFretry: 2000\n\n" +
    ": a comment\n" +
    'event: flag-updated\ndata: {"flagKey":"a"}\nid: 1700000000001\n\n' +
    "event: heartbeat\ndata: {}\n\n" +
    "data: line one\r\ndata:line two\r\n\r\n" +
    'event: flag-change\rdata: {"flagKey":null}\rid: 1700000000002\r\r' +
    "event: no-data\n\n" +
    "data: unfinished";

  const expected = [
    { event: "flag-updated", data: '{"flagKey":"a"}', id: "1700000000001" },
    { event: "heartbeat", data: "{}", id: "1700000000001" },
    { event: "message", data: "line one\nline two", id: "1700000000001" },
    { event: "flag-change", data: '{"flagKey":null}', id: "1700000000002" },
  ];

  it.each([1, 2, 3, 7, 1000])("gives the same messages in chunks of %i characters", (size) => {
    const { messages, parser } = parse(stream, size);
    expect(messages).toEqual(expected);
    expect(parser.retry).toBe(2000);
    expect(parser.lastEventId).toBe("1700000000002");
  });

  it("keeps a CR that ends a chunk until it knows whether LF follows", () => {
    const parser = new SseParser();
    expect(parser.push("data: x\r")).toEqual([]);
    expect(parser.push("\n\r\n")).toEqual([{ event: "message", data: "x", id: "" }]);
  });

  it("ignores unknown fields, an id with NUL, and a non-numeric retry", () => {
    const { messages, parser } = parse("foo: bar\nid: a\0b\nretry: soon\ndata\n\n");
    expect(messages).toEqual([{ event: "message", data: "", id: "" }]);
    expect(parser.retry).toBeUndefined();
  });
});
