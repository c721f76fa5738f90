/**
 * Big files (parsed off the main thread by the built CLI): they load, serve, reload, and their
 * problems are still located at file:line:col.
 */
import { writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, startCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/files.js";

const KEY = "big-file-key-0123456789";
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * n flags, about 1 KiB each (a long note: parsing costs per YAML node, not per byte); flag
 * `broken` (line 4 + 2*n) with an unknown operator when asked.
 */
const NOTE = "padding-".repeat(100);
const bigFile = (n: number, variant: string, broken = false) => {
  const lines = [`apiKey: ${KEY}`, "segments: { beta: { ends_with: [{ var: email }, '@example.com'] } }", "flags:"];
  for (let i = 0; i < n; i++) {
    lines.push(
      `  flag-${i}: { variants: { 'on': true, 'off': false }, defaultVariant: '${variant}', metadata: { owner: team-${i % 10}, note: ${NOTE} } }`,
    );
    lines.push(`  # ${"-".repeat(40)}`);
  }
  if (broken) lines.push("  broken: { variants: { 'on': true }, defaultVariant: 'on', targeting: { nope: [1] } }");
  return `${lines.join("\n")}\n`;
};

const evaluate = async (url: string, flag: string) => {
  const res = await fetch(`${url}/ofrep/v1/evaluate/flags/${flag}`, { method: "POST", headers: { "x-api-key": KEY } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe("a flag file of about a megabyte", () => {
  it("is served, reloaded, and its problems located at file:line:col", { timeout: 120_000 }, async () => {
    const n = 1000;
    const dir = await tempDir();
    const file = await dir.write("flags/dev.yaml", bigFile(n, "on"));
    expect(bigFile(n, "on").length).toBeGreaterThan(900 * 1024); // parsed off the main thread (over 512 KiB)

    const { cli, url } = await startCli([dir.file("flags"), "--state-dir", dir.file("state")]);
    cleanups.push(() => cli.stop("SIGKILL"));
    expect(await evaluate(url, `flag-${n - 1}`)).toMatchObject({ status: 200, body: { value: true } });

    // An edit that changes every flag and breaks one: the others apply, the problem is located.
    await writeFile(file, bigFile(n, "off", true));
    await cli.waitFor(/unknown operator "nope"/, "stderr", 60_000);
    expect(cli.stderr()).toContain(`${file}:${4 + 2 * n}:74 unknown operator "nope"`);
    for (let i = 0; i < 400 && (await evaluate(url, "flag-0")).body.value !== false; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await evaluate(url, `flag-${n - 1}`)).toMatchObject({ status: 200, body: { value: false } });
    expect(await evaluate(url, "broken")).toMatchObject({ status: 400, body: { errorCode: "PARSE_ERROR" } });

    const validate = runCli(["validate", file]);
    expect((await validate.exited).code).toBe(1);
    expect(validate.stderr()).toContain(`:${4 + 2 * n}:74 unknown operator "nope"`);
  });
});
