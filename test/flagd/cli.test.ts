/** `flagserve serve --flagd-port`: the options reach the server, the banner says where, a taken port is an error. */
import { createServer } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startCli, type CliProcess } from "../helpers/cli.js";
import { tempDir } from "../helpers/files.js";
import { flagdClients, withSelector } from "../helpers/flagd.js";
import { OFREP_FIXTURE } from "../helpers/fixtures.js";

let cli: CliProcess;
let flagdPort: number;

beforeAll(async () => {
  const dir = await tempDir();
  await dir.write("flags/test.yaml", OFREP_FIXTURE);
  ({ cli } = await startCli([
    dir.file("flags"),
    "--flagd-port",
    "0",
    "--flagd-selector-by-name",
    "test",
    "--max-streams-per-ip",
    "1",
    "--state-dir",
    dir.file("state"),
  ]));
  flagdPort = Number(cli.stdout().match(/^ {2}flagd port (\d+) \(gRPC, gRPC-Web, Connect; /m)?.[1]);
});

afterAll(async () => {
  await cli?.stop();
});

describe("flagserve serve --flagd-port", () => {
  it("serves flagd's evaluation service on the port the banner names, over gRPC and Connect; the opted-in name selects", async () => {
    expect(flagdPort).toBeGreaterThan(0);
    for (const door of ["gRPC", "Connect (HTTP/1.1, JSON)"] as const) {
      const { v2 } = flagdClients(door, flagdPort);
      expect(await v2.resolveBoolean({ flagKey: "bool-flag" }, withSelector("test"))).toMatchObject({
        value: true,
        reason: "STATIC",
        variant: "on",
      });
    }
  });

  it("--max-streams-per-ip holds for the flagd streams too", async () => {
    const { sync } = flagdClients("gRPC", flagdPort);
    const abort = new AbortController();
    const first = sync.syncFlags({ selector: "test" }, { signal: abort.signal })[Symbol.asyncIterator]();
    await first.next();
    const second = await sync
      .syncFlags({ selector: "test" })
      [Symbol.asyncIterator]()
      .next()
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    abort.abort();
    expect(second).toBeInstanceOf(ConnectError);
    expect((second as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((second as ConnectError).rawMessage).toMatch(/too many open streams from 127\.0\.0\.1 \(at most 1\)/);
  });

  it("a flagd port in use is an error: exit 1, naming the port", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const taken = (blocker.address() as { port: number }).port;
    const dir = await tempDir();
    await dir.write("flags/test.yaml", OFREP_FIXTURE);
    const failing = runCli([dir.file("flags"), "--port", "0", "--flagd-port", String(taken), "--state-dir", dir.file("state")]);
    const { code } = await failing.exited;
    blocker.close();
    expect(code).toBe(1);
    expect(failing.stderr()).toContain(`flagd port ${taken} on 127.0.0.1 is not available`);
  });
});
