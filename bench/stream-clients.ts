/**
 * The client side of bench/streams.ts, in its own process so that it has its own core and its own
 * file descriptors: many raw event-stream connections (node:net, one small parser per socket), and
 * the file edits, so that the write and every receipt are timed on one clock. Driven over IPC:
 *
 *   { type: "open", port, path, key, count, concurrency } -> { ms, failed }
 *   { type: "prepare", file, content }                    -> {} (the next edit's file and text)
 *   { type: "edit", timeoutMs }                           -> { latencies } (ms per stream, -1 if none)
 *   { type: "close" }                                     -> exits
 *
 * The text travels before the edit, so that an edit's window is not also the time to copy a 2 MB
 * text between two processes (and to serialize it in the one measuring evaluations).
 */
import { writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";

interface Stream {
  socket: Socket;
  open: boolean;
  /** The last bytes seen, so that a marker split between two chunks is still found. */
  tail: string;
  receivedAt: number;
}

const EVENT = "event: flag-updated";
const streams: Stream[] = [];
let editStartedAt = 0;
let waiting = 0;
let allReceived: (() => void) | undefined;

function onData(stream: Stream, chunk: Buffer, opened: (ok: boolean) => void): void {
  const text = stream.tail + chunk.toString("latin1");
  if (!stream.open) {
    stream.open = true;
    opened(text.startsWith("HTTP/1.1 200"));
  }
  if (editStartedAt > 0 && stream.receivedAt === 0 && text.includes(EVENT)) {
    stream.receivedAt = performance.now();
    if (--waiting === 0) allReceived?.();
  }
  stream.tail = text.slice(-EVENT.length);
}

function openOne(port: number, request: string): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    const opened = (ok: boolean) => {
      if (settled) return;
      settled = true;
      if (ok) streams.push(stream);
      else stream.socket.destroy();
      resolve(ok);
    };
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    const stream: Stream = { socket, open: false, tail: "", receivedAt: 0 };
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => onData(stream, chunk, opened));
    socket.on("error", () => opened(false));
    socket.on("close", () => opened(false));
  });
}

/** `count` streams, `concurrency` handshakes in flight at a time; ms from the first connect to the last 200. */
type OpenMessage = { type: "open"; port: number; path: string; key: string; count: number; concurrency: number };
type PrepareMessage = { type: "prepare"; file: string; content: string };
type EditMessage = { type: "edit"; timeoutMs: number };

let prepared: PrepareMessage | undefined;

async function openAll(msg: OpenMessage) {
  const request = `GET ${msg.path} HTTP/1.1\r\nHost: 127.0.0.1:${msg.port}\r\nX-API-Key: ${msg.key}\r\nAccept: text/event-stream\r\n\r\n`;
  let next = 0;
  let failed = 0;
  const start = performance.now();
  const worker = async () => {
    while (next < msg.count) {
      next++;
      if (!(await openOne(msg.port, request))) failed++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(msg.concurrency, msg.count) }, worker));
  return { ms: performance.now() - start, failed };
}

async function edit(msg: EditMessage) {
  for (const s of streams) s.receivedAt = 0;
  waiting = streams.length;
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve) => {
    allReceived = resolve;
    timer = setTimeout(resolve, msg.timeoutMs);
  });
  editStartedAt = performance.now();
  // In one go, as an editor saves: done asynchronously, the write after the truncation would wait
  // for this process to be free (busy reading the streams the truncation already woke), and
  // each server would then see a file left empty for a while, or a second change.
  if (prepared === undefined) throw new Error("an edit with no text prepared");
  writeFileSync(prepared.file, prepared.content);
  prepared = undefined;
  await done;
  clearTimeout(timer);
  const latencies = streams.map((s) => (s.receivedAt === 0 ? -1 : s.receivedAt - editStartedAt));
  editStartedAt = 0;
  return { latencies };
}

process.on("message", async (msg: OpenMessage | PrepareMessage | EditMessage | { type: "close" }) => {
  if (msg.type === "open") process.send!(await openAll(msg));
  else if (msg.type === "prepare") {
    prepared = msg;
    process.send!({});
  } else if (msg.type === "edit") process.send!(await edit(msg));
  else {
    for (const s of streams) s.socket.destroy();
    process.disconnect();
  }
});

// If the benchmark stops early, do not outlive it.
process.on("disconnect", () => process.exit(0));
