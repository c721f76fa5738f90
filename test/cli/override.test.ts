/**
 * `flagserve override`, run in-process (runCli), against a running `flagserve` process, and the
 * dashboard line of the banner.
 */
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runCli, startCli, type CliProcess } from "../helpers/cli.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { freePort } from "../helpers/ports.js";
import { DEV_KEY, DEV_YAML } from "../admin/helpers.js";
import { runHere } from "./run.js";

let dir: TempDir;
let server: CliProcess;
let url: string;

beforeAll(async () => {
  dir = await tempDir();
  await dir.write("flags/dev.yaml", DEV_YAML);
  ({ cli: server, url } = await startCli([dir.file("flags"), "--state-dir", dir.file("state"), "--overrides", dir.file("overrides.yaml")], {
    env: { FLAGSERVE_ADMIN_TOKEN: "" },
  }));
});
afterAll(async () => {
  await server?.stop();
});

/** Runs `flagserve override ...` to completion. */
const override = (args: string[], env: NodeJS.ProcessEnv = { FLAGSERVE_ADMIN_TOKEN: "" }) => runHere(["override", ...args], { env });
const connection = () => ["--url", url, "--state-dir", dir.file("state")];
const banner = async () =>
  fetch(`${url}/ofrep/v1/evaluate/flags/banner`, { method: "POST", headers: { "x-api-key": DEV_KEY } }).then(
    (r) => r.json() as Promise<{ value: unknown }>,
  );

describe("flagserve override", () => {
  it("prints the dashboard URL with the generated token in the fragment", async () => {
    const token = (await readFile(dir.file("state/admin-token"), "utf8")).trim();
    expect(server.stdout()).toContain(`dashboard http://localhost:${new URL(url).port}/#token=${token}`);
  });

  it("set, list and clear with the token from the state directory; the server answers accordingly", async () => {
    const set = await override(["set", "banner", "green", "--env", "dev", ...connection()]);
    expect(set).toMatchObject({ code: 0, stdout: "dev  banner  variant green\n" });
    expect(await banner()).toMatchObject({ value: "green" });
    expect(await override(["set", "new-checkout", "--disable", "--env", "dev", ...connection()])).toMatchObject({ code: 0 });

    const list = await override(["list", ...connection()]);
    expect(list).toMatchObject({ code: 0, stdout: "dev  banner  variant green\ndev  new-checkout  disabled\n" });
    expect(JSON.parse((await override(["list", "--json", ...connection()])).stdout)).toEqual({
      dev: { banner: { variant: "green" }, "new-checkout": { state: "DISABLED" } },
    });
    expect(await readFile(dir.file("overrides.yaml"), "utf8")).toContain("variant: green");

    expect(await override(["clear", "banner", "--env", "dev", ...connection()])).toMatchObject({
      code: 0,
      stdout: "dev  banner  cleared\n",
    });
    expect(await banner()).toMatchObject({ value: "blue" });
    expect(await override(["clear", "--env", "dev", ...connection()])).toMatchObject({ code: 0, stdout: "dev  new-checkout  cleared\n" });
    expect(await override(["list", ...connection()])).toMatchObject({ code: 0, stdout: "" });
  });

  it("exit 1 with the server's reason for an unknown variant, flag or environment, a wrong token, or no server", async () => {
    const variant = await override(["set", "banner", "purple", "--env", "dev", ...connection()]);
    expect(variant.code).toBe(1);
    expect(variant.stderr).toContain("422 VARIANT_NOT_FOUND: flag banner has no variant 'purple' (valid: blue, green)");
    expect((await override(["set", "nope", "on", "--env", "dev", ...connection()])).stderr).toContain("404 FLAG_NOT_FOUND");
    expect((await override(["clear", "--env", "staging", ...connection()])).code).toBe(1);

    const wrong = await override(["list", "--url", url], { FLAGSERVE_ADMIN_TOKEN: "not-the-token" });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("401 UNAUTHORIZED");
    const missing = await override(["list", "--url", url, "--state-dir", dir.file("nowhere")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no admin token");
    const port = await freePort();
    const down = await override(["list", "--url", `http://127.0.0.1:${port}`, "--admin-token", "x"]);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`cannot reach http://127.0.0.1:${port}: ECONNREFUSED`);
    expect(await banner()).toMatchObject({ value: "blue" });
  });

  it("sends the token kept in the state directory only to the server that recorded it there, by default to its URL", async () => {
    // Another local server: it must never see the first one's token.
    const seen: (string | undefined)[] = [];
    const other = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { "content-type": "application/json" }).end('{"overrides":{}}');
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    try {
      const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      const refused = await override(["list", "--url", otherUrl, "--state-dir", dir.file("state")]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        `flagserve override: not sending the admin token kept in ${dir.file("state")} to ${otherUrl}: it belongs to the server at ${url}. Use --url ${url}, or pass the other server's token with --admin-token\n`,
      );
      expect(seen).toEqual([]);
      // A token given explicitly goes where it is told.
      expect((await override(["list", "--url", otherUrl, "--admin-token", "a-token-for-the-other-one"])).code).toBe(0);
      expect(seen).toEqual(["Bearer a-token-for-the-other-one"]);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
    // Without --url: the recorded one.
    expect(await override(["list", "--json", "--state-dir", dir.file("state")])).toMatchObject({ code: 0 });
  });

  it("exit 2 for usage errors", async () => {
    expect((await override(["set", "banner", "green", ...connection()])).code).toBe(2); // no --env
    expect((await override(["set", "banner", "--env", "dev", ...connection()])).code).toBe(2); // neither variant nor --disable
    expect((await override(["set", "banner", "green", "--disable", "--env", "dev", ...connection()])).code).toBe(2);
    expect((await override(["list", "--url", "ftp://x"])).code).toBe(2);
  });
});

describe("flagserve --overrides FILE", () => {
  it("a file that is not an overrides file: a one-line error and exit 1", async () => {
    await dir.write("bad-overrides.yaml", "environments: [1, 2\n");
    const cli = runCli([
      dir.file("flags"),
      "--port",
      "0",
      "--state-dir",
      dir.file("state3"),
      "--overrides",
      dir.file("bad-overrides.yaml"),
    ]);
    expect((await cli.exited).code).toBe(1);
    expect(cli.stderr()).toMatch(/^error: --overrides .*bad-overrides\.yaml: .+\n$/m);
    expect(cli.stderr()).not.toMatch(/\n\s+at /); // no stack trace
  });
});

describe("flagserve --no-admin", () => {
  it("prints no dashboard line and has no admin API", async () => {
    const { cli, url: offUrl } = await startCli([dir.file("flags"), "--state-dir", dir.file("state2"), "--no-admin"]);
    try {
      expect(cli.stdout()).not.toContain("dashboard");
      const result = await override(["list", "--url", offUrl, "--admin-token", "anything"]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("404 NOT_FOUND");
    } finally {
      await cli.stop();
    }
  });
});
