/** `flagserve eval`, run in-process (runCli): the same bytes the HTTP single-flag route answers, without a server. */
import { serveFlagsDir } from "../helpers/server.js";
import { beforeAll, afterAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server/server.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { OFREP_FIXTURE, OTHER_FIXTURE, TEST_KEY } from "../helpers/fixtures.js";
import { run, runHere } from "./run.js";

let dir: TempDir;
let server: RunningServer;

beforeAll(async () => {
  dir = await tempDir("flagserve-eval-");
  await dir.write("flags/test.yaml", OFREP_FIXTURE);
  await dir.write("flags/other.yaml", OTHER_FIXTURE);
  server = await serveFlagsDir(dir, { watch: false });
});
afterAll(async () => {
  await server?.close();
});

/** The HTTP answer: status and the body's exact text. */
async function http(flag: string, body?: string) {
  const res = await fetch(`${server.url}/ofrep/v1/evaluate/flags/${encodeURIComponent(flag)}`, {
    method: "POST",
    headers: { "x-api-key": TEST_KEY, "content-type": "application/json" },
    body,
  });
  return { status: res.status, text: await res.text() };
}

const evalCli = (flag: string, context?: string, env = "test") =>
  runHere(["eval", flag, "--env", env, ...(context === undefined ? [] : ["--context", context]), dir.file("flags")]);

describe("flagserve eval", () => {
  // Every row of the acceptance table that does not depend on the clock.
  const cases: { flag: string; context?: Record<string, unknown>; status: number }[] = [
    { flag: "bool-flag", status: 200 },
    { flag: "string-flag", status: 200 },
    { flag: "int-flag", status: 200 },
    { flag: "float-flag", status: 200 },
    { flag: "object-flag", status: 200 },
    { flag: "targeted-flag", context: { plan: "premium" }, status: 200 },
    { flag: "targeted-flag", context: { properties: { plan: "free" } }, status: 200 },
    { flag: "split-flag", context: { targetingKey: "user-7" }, status: 200 },
    { flag: "split-flag", status: 400 },
    { flag: "disabled-flag", status: 200 },
    { flag: "default-flag", status: 200 },
    { flag: "meta-flag", status: 200 },
    { flag: "bad-target-flag", context: { plan: "broken" }, status: 400 },
    { flag: "no-such-flag", status: 404 },
  ];

  it.each(cases)("$flag $context: the body the server sends, exit 0 only on 200", async ({ flag, context, status }) => {
    const json = context === undefined ? undefined : JSON.stringify(context);
    const [expected, cli] = await Promise.all([
      http(flag, json === undefined ? undefined : JSON.stringify({ context })),
      evalCli(flag, json),
    ]);
    expect(expected.status).toBe(status);
    expect(cli.stdout).toBe(`${expected.text}\n`);
    expect(cli.stderr).toBe("");
    expect(cli.code).toBe(status === 200 ? 0 : 1);
  });

  it("FLAG_NOT_FOUND carries the key, exit 1", async () => {
    const { code, stdout } = await evalCli("missing-flag");
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toEqual({
      key: "missing-flag",
      errorCode: "FLAG_NOT_FOUND",
      errorDetails: "flag 'missing-flag' was not found",
    });
  });

  it("INVALID_CONTEXT for --context that is not JSON, or not an object, like the server", async () => {
    const malformed = await evalCli("bool-flag", "{not json");
    expect(malformed.code).toBe(1);
    const body = JSON.parse(malformed.stdout);
    const fromServer = JSON.parse((await http("bool-flag", "{not json")).text);
    expect(Object.keys(body)).toEqual(Object.keys(fromServer));
    expect(body).toMatchObject({ key: "bool-flag", errorCode: "INVALID_CONTEXT" });
    expect(body.errorDetails).toMatch(/^--context is not valid JSON: /);

    for (const context of ["[1, 2]", '"text"', '{"targetingKey": 42}', '{"properties": 1}']) {
      const [cli, server] = await Promise.all([evalCli("bool-flag", context), http("bool-flag", `{"context": ${context}}`)]);
      expect(server.status).toBe(400);
      expect(cli.code).toBe(1);
      expect(cli.stdout).toBe(`${server.text}\n`);
      expect(JSON.parse(cli.stdout)).toMatchObject({ key: "bool-flag", errorCode: "INVALID_CONTEXT" });
    }
  });

  it("reads the context from a file (@file) or stdin (@-)", async () => {
    await dir.write("ctx.json", '{"plan": "premium"}');
    const fromFile = await evalCli("targeted-flag", `@${dir.file("ctx.json")}`);
    expect(JSON.parse(fromFile.stdout)).toMatchObject({ variant: "vip" });
    // Standard input is the process's: read by the binary.
    const fromStdin = await run(["eval", "targeted-flag", "-e", "test", "-c", "@-", dir.file("flags")], { stdin: '{"plan":"premium"}' });
    expect(JSON.parse(fromStdin.stdout)).toMatchObject({ variant: "vip" });
    const unreadable = await evalCli("targeted-flag", `@${dir.file("nope.json")}`);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toContain("cannot read");
  });

  it("the environment selects the flags, as the key does over HTTP", async () => {
    const { code, stdout } = await evalCli("bool-flag", undefined, "other");
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ value: false, variant: "off" });
  });

  it("an unknown environment: exit 1, listing the known ones", async () => {
    const { code, stdout, stderr } = await evalCli("bool-flag", undefined, "staging");
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("no environment 'staging'");
    expect(stderr).toContain("(known: other, test)");
  });

  it("an environment with problems: its problems and exit 1; other environments still evaluate, with a note", async () => {
    const bad = await tempDir("flagserve-eval-");
    await bad.write("flags/dev.yaml", "flags:\n  f:\n    variants: { a: 1 }\n    defaultVariant: b\n");
    const { code, stderr } = await runHere(["eval", "f", "-e", "dev", bad.file("flags")]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${bad.file("flags/dev.yaml")}:4:21 `);
    expect(stderr).toContain("environment 'dev' has problems");

    // A valid environment still evaluates; stderr says the server would refuse the set.
    await bad.write("flags/ok.yaml", "flags:\n  f:\n    variants: { a: 1 }\n    defaultVariant: a\n");
    const ok = await runHere(["eval", "f", "-e", "ok", bad.file("flags")]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ key: "f", value: 1 });
    expect(ok.stderr).toContain("problems in dev");
  });
});
