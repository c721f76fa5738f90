/** --cors-origin narrows which pages may call the API; preflights still allow what they ask for. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli, type CliProcess } from "../helpers/cli.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { OFREP_FIXTURE, TEST_KEY } from "../helpers/fixtures.js";

let dir: TempDir;
let cli: CliProcess;
let base: string;

beforeAll(async () => {
  dir = await tempDir();
  await dir.write("flags/test.yaml", OFREP_FIXTURE);
  ({ cli, url: base } = await startCli([dir.file("flags"), "--cors-origin", "http://allowed.example,http://also.example"]));
});

afterAll(async () => {
  await cli?.stop();
});

const preflight = (origin: string) =>
  fetch(`${base}/ofrep/v1/evaluate/flags`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "x-api-key, x-flipswitch-sdk" },
  });

describe("--cors-origin", () => {
  it("answers a listed origin with itself and the headers it asked for, varying on both", async () => {
    const res = await preflight("http://also.example");
    expect(res.headers.get("access-control-allow-origin")).toBe("http://also.example");
    expect(res.headers.get("access-control-allow-headers")).toBe("x-api-key, x-flipswitch-sdk");
    const vary = res.headers.get("vary")!.toLowerCase();
    expect(vary).toContain("origin");
    expect(vary).toContain("access-control-request-headers");
  });

  it("gives an unlisted origin no allow-origin, on preflights and on requests", async () => {
    const res = await preflight("http://evil.example");
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const actual = await fetch(`${base}/ofrep/v1/evaluate/flags`, {
      method: "POST",
      headers: { origin: "http://evil.example", "x-api-key": TEST_KEY },
    });
    expect(actual.status).toBe(200); // not a browser: the answer is there, but a page cannot read it
    expect(actual.headers.get("access-control-allow-origin")).toBeNull();
    expect(actual.headers.get("vary")?.toLowerCase()).toContain("origin");
  });
});
