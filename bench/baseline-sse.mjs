// The streams baseline: a bare node:http server that holds every GET open as an event stream
// (the same headers and first bytes as flagserve's) and, when node:fs.watch reports a change of
// the watched file, writes one `flag-updated` frame to every open response. A write fires two
// watch events on Linux (truncate, then data); events within 10 ms after a frame has gone out to
// every response send nothing more (counted from when the writes are done, which at 10 000
// streams takes far longer than that: one edit, one frame).
import { watch } from "node:fs";
import { createServer } from "node:http";
import { basename, dirname } from "node:path";

const file = process.argv[2];
const streams = new Set();
let quietUntil = 0;
let id = Date.now();

watch(dirname(file), (_event, name) => {
  if (name !== basename(file) || performance.now() < quietUntil) return;
  const frame = `event: flag-updated\ndata: {"flagKey":"f","timestamp":"${new Date().toISOString()}"}\nid: ${++id}\n\n`;
  for (const res of streams) res.write(frame);
  // res.write hands its bytes to the socket on the next tick: this tick comes after all of them
  // (and before any other watch callback).
  process.nextTick(() => (quietUntil = performance.now() + 10));
});

const server = createServer((req, res) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" });
  res.write("retry: 2000\n\n");
  streams.add(res);
  res.on("close", () => streams.delete(res));
});
server.listen(0, "127.0.0.1", () => console.log(`ready http://127.0.0.1:${server.address().port}`));
process.on("SIGTERM", () => {
  for (const res of streams) res.destroy();
  server.close(() => process.exit(0));
});
