/**
 * A problem costs only what it breaks, end to end: real files edited under a running server,
 * real SSE events, real HTTP answers, and `validate` on the same files.
 */
import { writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, startCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/files.js";
import { openSse, type SseBlock } from "../helpers/sse.js";

const KEY = "isolation-key-0123456789";
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const boolFlag = (defaultVariant: string, extra = "") =>
  `{ variants: { "on": true, "off": false }, defaultVariant: "${defaultVariant}"${extra} }`;
const file = (flags: Record<string, string>) =>
  [
    `apiKey: ${KEY}`,
    "segments:",
    "  beta: { ends_with: [{ var: email }, '@example.com'] }",
    "flags:",
    ...Object.entries(flags).map(([k, v]) => `  ${k}: ${v}`),
    "",
  ].join("\n");

async function serve(text: string, args: string[] = []) {
  const dir = await tempDir();
  await dir.write("flags/dev.yaml", text);
  const { cli, url } = await startCli([dir.file("flags"), "--state-dir", dir.file("state"), ...args]);
  cleanups.push(() => cli.stop("SIGKILL"));
  return { dir, cli, url };
}

const evaluate = async (url: string, flag: string) => {
  const res = await fetch(`${url}/ofrep/v1/evaluate/flags/${flag}`, { method: "POST", headers: { "x-api-key": KEY } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** Bounded wait until `flag` answers as `check` wants (the reload has been applied). */
async function until(url: string, flag: string, check: (a: { status: number; body: Record<string, unknown> }) => boolean) {
  for (let i = 0; i < 200; i++) {
    if (check(await evaluate(url, flag))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${flag} never answered as expected: ${JSON.stringify(await evaluate(url, flag))}`);
}

const flagKey = (b: SseBlock) => (JSON.parse(b.data!) as { flagKey?: string }).flagKey;

describe("a flag broken by an edit", () => {
  it("keeps its last good definition while the other flags' edits apply, with events for those only", async () => {
    const { dir, url, cli } = await serve(file({ a: boolFlag("on"), b: boolFlag("on"), c: boolFlag("on") }));
    const sse = await openSse(`${url}/api/v1/flags/events`, { "x-api-key": KEY, accept: "text/event-stream" });
    cleanups.push(() => sse.close());

    // a: unknown operator; b: a $ref to nothing; c: a real change; d: new and broken (mixed variant types)
    await writeFile(
      dir.file("flags/dev.yaml"),
      file({
        a: boolFlag("on", ", targeting: { if: [{ invalid: [1] }, 'off', null] }"),
        b: boolFlag("off", ", targeting: { if: [{ $ref: nowhere }, 'off', null] }"),
        c: boolFlag("off"),
        d: `{ variants: { x: 1, y: "two" }, defaultVariant: x }`,
      }),
    );
    await sse.next((e) => e.event === "flag-updated" && flagKey(e) === "c");
    await until(url, "c", (r) => r.body.variant === "off");

    expect(await evaluate(url, "a")).toMatchObject({ status: 200, body: { value: true, variant: "on", reason: "STATIC" } });
    expect(await evaluate(url, "b")).toMatchObject({ status: 200, body: { value: true, variant: "on" } });
    expect(await evaluate(url, "d")).toMatchObject({
      status: 400,
      body: { key: "d", errorCode: "PARSE_ERROR", errorDetails: expect.stringContaining("same type") },
    });
    const ready = (await (await fetch(`${url}/readyz`)).json()) as { status: string; problems: string[] };
    expect(ready.status).toBe("degraded");
    expect(ready.problems).toEqual([
      expect.stringMatching(/dev\.yaml:5:\d+ unknown operator "invalid"/),
      expect.stringMatching(/dev\.yaml:6:\d+ unknown segment "nowhere"/),
      expect.stringMatching(/dev\.yaml:8:\d+ variant 'y' is a string but variant 'x' is a number/),
    ]);
    await cli.waitFor(/flag a keeps its last good definition/, "stderr");
    expect(cli.stderr()).toMatch(/flag d answers PARSE_ERROR until its problems are fixed/);

    // The edit that fixes them: a gets its new definition (and its event), d appears.
    await writeFile(
      dir.file("flags/dev.yaml"),
      file({ a: boolFlag("off"), b: boolFlag("on"), c: boolFlag("off"), d: `{ variants: { x: 1, y: 2 }, defaultVariant: y }` }),
    );
    await sse.next((e) => e.event === "flag-updated" && flagKey(e) === "d");
    await until(url, "a", (r) => r.body.variant === "off");
    expect(await evaluate(url, "d")).toMatchObject({ status: 200, body: { value: 2 } });
    // one event per flag that changed for clients: c, then a and d; never b (unchanged throughout)
    expect(sse.events().map((e) => [e.event, flagKey(e)])).toEqual([
      ["flag-updated", "c"],
      ["flag-updated", "a"],
      ["flag-updated", "d"],
    ]);
    expect(((await (await fetch(`${url}/readyz`)).json()) as { status: string }).status).toBe("ready");
  });

  it("at start-up needs --allow-invalid; then the broken flag answers PARSE_ERROR and the rest is served", async () => {
    const text = file({ good: boolFlag("on"), broken: boolFlag("on", ", targeting: { nope: [] }") });
    const dir = await tempDir();
    await dir.write("flags/dev.yaml", text);

    const refused = runCli([dir.file("flags"), "--port", "0", "--state-dir", dir.file("state")]);
    cleanups.push(() => refused.stop("SIGKILL"));
    expect((await refused.exited).code).toBe(1);
    expect(refused.stderr()).toMatch(/dev\.yaml:\d+:\d+ unknown operator "nope"/);

    const validate = runCli(["validate", dir.file("flags")]);
    expect((await validate.exited).code).toBe(1);
    expect(validate.stderr()).toMatch(/unknown operator "nope"/);

    const { url } = await serve(text, ["--allow-invalid"]);
    expect(await evaluate(url, "good")).toMatchObject({ status: 200, body: { value: true } });
    expect(await evaluate(url, "broken")).toMatchObject({ status: 400, body: { key: "broken", errorCode: "PARSE_ERROR" } });
  });

  it("a file that does not parse keeps the whole last good file", async () => {
    const { dir, url, cli } = await serve(file({ a: boolFlag("on"), b: boolFlag("on") }));
    await writeFile(dir.file("flags/dev.yaml"), `${file({ a: boolFlag("off"), b: boolFlag("off") })}  c: [unclosed\n`);
    await cli.waitFor(/dev: keeping the last good configuration/, "stderr");
    expect(await evaluate(url, "a")).toMatchObject({ body: { variant: "on" } });
    expect(await evaluate(url, "b")).toMatchObject({ body: { variant: "on" } });
  });
});
