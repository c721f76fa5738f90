/** A raw streaming HTTP client for SSE, as `curl -N` would read it: bytes in, blocks out. */

export interface SseBlock {
  event?: string;
  data?: string;
  id?: string;
  /** The block's lines in the order they came, e.g. ["event", "data", "id"]. */
  fields: string[];
  raw: string;
}

export interface SseConnection {
  response: Response;
  /** Every block received so far (comments and `retry:`-only blocks included). */
  blocks: SseBlock[];
  /** Blocks that are events: have a data line and are not heartbeats. */
  events(): SseBlock[];
  /** Waits until a block matching `predicate` arrived after `from` (an index into blocks). */
  next(predicate?: (b: SseBlock) => boolean, timeoutMs?: number, from?: number): Promise<SseBlock>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

function parseBlock(raw: string): SseBlock {
  const block: SseBlock = { fields: [], raw };
  for (const line of raw.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    block.fields.push(field);
    if (field === "event") block.event = value;
    else if (field === "data") block.data = block.data === undefined ? value : `${block.data}\n${value}`;
    else if (field === "id") block.id = value;
  }
  return block;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  const blocks: SseBlock[] = [];
  const waiters = new Set<() => void>();
  let buffer = "";
  let done = false;
  const ended = (async () => {
    if (!response.body) return;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        buffer += value;
        let cut: number;
        while ((cut = buffer.indexOf("\n\n")) !== -1) {
          blocks.push(parseBlock(buffer.slice(0, cut + 2)));
          buffer = buffer.slice(cut + 2);
        }
        for (const w of waiters) w();
      }
    } catch {
      // aborted by close()
    } finally {
      done = true;
      for (const w of waiters) w();
    }
  })();

  const next: SseConnection["next"] = (predicate = () => true, timeoutMs = 5_000, from = 0) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = blocks.slice(from).find(predicate);
        if (found) return finish(() => resolve(found));
        if (done) finish(() => reject(new Error(`stream ended; received:\n${blocks.map((b) => b.raw).join("")}`)));
      };
      const timer = setTimeout(
        () =>
          finish(() => reject(new Error(`no matching SSE block within ${timeoutMs} ms; received:\n${blocks.map((b) => b.raw).join("")}`))),
        timeoutMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        settle();
      };
      waiters.add(check);
      check();
    });

  return {
    response,
    blocks,
    events: () => blocks.filter((b) => b.data !== undefined && b.event !== "heartbeat"),
    next,
    ended,
    close: () => abort.abort(),
  };
}
