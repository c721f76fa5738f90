/** `flagserve events URL --key KEY`: a change-event client that prints the stream, line by line. */
import { Command, Option } from "commander";
import { networkReason } from "../sources/network-reason.js";
import { npmLaunchers, watchProcesses } from "./launcher.js";
import { parseNonNegativeNumber, serverUrl } from "./options.js";
import { err, out } from "./paths.js";
import { SseParser, type SseMessage } from "./sse.js";

export const EVENTS_PATH = "/api/v1/flags/events";
const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 30_000;

interface EventsFlags {
  key: string;
  json?: boolean;
  heartbeats?: boolean;
  insecure?: boolean;
  /** Seconds without a connection after which to stop retrying; 0 = never. */
  giveUp: number;
}

/** The stream's URL: URL as given when it already ends with the events path, else that path appended. */
export function eventsUrl(value: string): string {
  return serverUrl(value, EVENTS_PATH).toString();
}

const seconds = (ms: number) => `${ms / 1000} s`;

/** Prints each event; hides heartbeats unless asked. */
function printer(flags: EventsFlags) {
  return (message: SseMessage) => {
    if (message.event === "heartbeat" && !flags.heartbeats) return;
    const time = new Date().toISOString();
    if (flags.json) {
      let data: unknown = message.data;
      try {
        data = JSON.parse(message.data);
      } catch {
        // not JSON: kept as the string it is
      }
      out(JSON.stringify({ time, event: message.event, ...(message.id !== "" && { id: message.id }), data }));
    } else {
      out(`${time}  ${message.event}  ${message.data.replaceAll("\n", " ")}`);
    }
  };
}

/** Runs until SIGINT/SIGTERM (0), a response that retrying cannot fix, or --give-up seconds without a connection (1). */
export async function followEvents(url: string, flags: EventsFlags): Promise<number> {
  const print = printer(flags);
  const stopping = stopOnSignals();
  const { signal } = stopping;
  const backoff = new Backoff(flags.giveUp, signal);
  let lastEventId = "";
  let connections = 0;
  try {
    while (!signal.aborted) {
      let response: Response;
      try {
        response = await fetch(url, {
          headers: { accept: "text/event-stream", "x-api-key": flags.key, ...(lastEventId !== "" && { "last-event-id": lastEventId }) },
          signal,
        });
      } catch (error) {
        if (signal.aborted) break;
        if (!(await backoff.retry(`cannot connect to ${url} (${networkReason(error)})`))) return 1;
        continue;
      }
      const refused = await refusal(url, response);
      if (refused?.final) {
        err(`flagserve events: ${refused.why}`);
        return 1;
      }
      if (refused) {
        if (!(await backoff.retry(refused.why, refused.atLeastMs))) return 1;
        continue;
      }

      connections += 1;
      backoff.connected();
      err(
        `${connections === 1 ? "connected to" : "reconnected to"} ${url}${lastEventId && connections > 1 ? ` (Last-Event-ID: ${lastEventId})` : ""}`,
      );
      const read = await readStream(response, signal, lastEventId, print);
      lastEventId = read.lastEventId;
      if (signal.aborted) break;
      backoff.connected(); // the stream was up until now
      if (!(await backoff.retry(read.why))) return 1;
    }
    return 0;
  } finally {
    stopping.dispose();
  }
}

/** Aborted on SIGINT, SIGTERM, or when npm, which started us, ends (it may not pass signals on: see launcher.ts). */
function stopOnSignals(): { signal: AbortSignal; dispose(): void } {
  const stopping = new AbortController();
  const stop = () => stopping.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const unwatch = watchProcesses(npmLaunchers(), stop);
  return {
    signal: stopping.signal,
    dispose() {
      unwatch();
      process.removeListener("SIGINT", stop);
      process.removeListener("SIGTERM", stop);
    },
  };
}

/** Waits `ms`, or less when `signal` aborts. */
const sleepUnless = (signal: AbortSignal, ms: number) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });

/** The wait between attempts: from FIRST_DELAY_MS, doubling up to MAX_DELAY_MS, reset by a connection; none left after --give-up seconds without one. */
class Backoff {
  #delay = FIRST_DELAY_MS;
  #connectedAt = Date.now(); // the start, then the last successful connection

  constructor(
    private readonly giveUpSeconds: number,
    private readonly signal: AbortSignal,
  ) {}

  connected(): void {
    this.#connectedAt = Date.now();
    this.#delay = FIRST_DELAY_MS;
  }

  /** Waits before the next attempt; false when --give-up seconds have passed without a connection. */
  async retry(why: string, atLeastMs = 0): Promise<boolean> {
    const left = this.giveUpSeconds > 0 ? this.#connectedAt + this.giveUpSeconds * 1000 - Date.now() : Infinity;
    if (left <= 0) {
      err(`flagserve events: ${why}; giving up after ${seconds(this.giveUpSeconds * 1000)} without a connection (--give-up)`);
      return false;
    }
    const wait = Math.round(Math.min(Math.max(this.#delay, atLeastMs), left));
    err(`${why}; reconnecting in ${seconds(wait)}`);
    await sleepUnless(this.signal, wait);
    this.#delay = Math.min(this.#delay * 2, MAX_DELAY_MS);
    return true;
  }
}

/** Why a response is not a stream to read (`final`: retrying cannot help); undefined for an event stream. */
async function refusal(url: string, response: Response): Promise<{ why: string; final: boolean; atLeastMs?: number } | undefined> {
  if (!response.ok) {
    const text = await response.text().catch(() => "");
    let details = text.trim().slice(0, 200);
    try {
      const body = JSON.parse(text) as { errorCode?: string; errorDetails?: string };
      if (body.errorCode) details = `${body.errorCode}: ${body.errorDetails ?? ""}`;
    } catch {
      // not JSON
    }
    const what = `${url} answered ${response.status}${details ? ` ${details}` : ""}`;
    if (response.status === 401 || response.status === 403)
      return { why: `${what} (the key was refused; retrying will not help)`, final: true };
    if (response.status === 404 || response.status === 405) return { why: `${what} (is this a flagserve URL?)`, final: true };
    const retryAfter = Number(response.headers.get("retry-after"));
    return { why: what, final: false, atLeastMs: Number.isFinite(retryAfter) ? retryAfter * 1000 : 0 };
  }
  const type = response.headers.get("content-type") ?? "";
  if (!/^text\/(event-stream|plain)/i.test(type)) {
    await response.body?.cancel();
    return { why: `${url} is not an event stream (Content-Type: ${type || "none"})`, final: true };
  }
  return undefined;
}

/** Prints the stream's events until it ends or breaks; returns why, and the last event id seen. */
async function readStream(
  response: Response,
  signal: AbortSignal,
  lastEventId: string,
  print: (message: SseMessage) => void,
): Promise<{ why: string; lastEventId: string }> {
  const parser = new SseParser();
  let why = "the server closed the stream";
  try {
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const message of parser.push(value)) {
        if (message.id !== "") lastEventId = message.id;
        print(message);
      }
    }
  } catch (error) {
    if (!signal.aborted) why = `the stream broke (${networkReason(error)})`;
  }
  if (parser.lastEventId !== "") lastEventId = parser.lastEventId;
  return { why, lastEventId };
}

export function eventsCommand(): Command {
  return new Command("events")
    .description("connect to a server's change-event stream and print each event as it arrives")
    .argument("<url>", `the server's URL (${EVENTS_PATH} is appended unless present)`, eventsUrl)
    .addOption(new Option("-k, --key <key>", "API key of the environment to follow").env("FLAGSERVE_KEY").makeOptionMandatory())
    .option("--json", "print each event as a JSON line {time, event, id, data}")
    .option("--heartbeats", "print heartbeat events too")
    .option("--insecure", "accept any TLS certificate (a server started with --https uses a self-signed one)")
    .addOption(
      new Option("--give-up <seconds>", "stop retrying after this long without a connection; 0 = never")
        .argParser(parseNonNegativeNumber("--give-up"))
        .default(30),
    )
    .addHelpText(
      "after",
      `
Output: one line per event on stdout, "<time>  <event>  <data>" (time = when it arrived);
connection notices on stderr. Both event sets are understood: flag-updated, config-updated
and heartbeat (the default) and flag-change (--event-set variant); any other name is printed
as it comes. Lost connections are retried after 0.5 s, doubling up to 30 s (reset once
connected), sending Last-Event-ID so the server replays what was missed; after --give-up
seconds (default 30) without a connection it stops.
Exit status: 0 on Ctrl-C (SIGINT), SIGTERM or when npm, which started it, ends; 1 when the
key is refused (401/403), the URL is not an event stream or no connection was made for
--give-up seconds; 2 usage error.

Examples:
  $ npx flagserve events http://127.0.0.1:8080 --key dev-example-key
  $ FLAGSERVE_KEY=dev-example-key flagserve events http://127.0.0.1:8080 --json | jq .data
  $ npx flagserve events https://127.0.0.1:8443/api/v1/flags/events -k KEY --insecure --heartbeats
  $ npx flagserve events http://127.0.0.1:8080 -k KEY --give-up 0     wait for the server forever`,
    )
    .action(async (url: string, flags: EventsFlags) => {
      // fetch has no per-request switch for this; the process only ever talks to this one server.
      if (flags.insecure) process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
      process.exitCode = await followEvents(url, flags);
    });
}
