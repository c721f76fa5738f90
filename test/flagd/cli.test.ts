/** `flagserve serve --flagd-port`: the options reach the server, the banner says where, a taken port is an error. */
import { createServer } from "node:net";
import { credentials, Metadata, makeClientConstructor, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startCli, type CliProcess } from "../helpers/cli.js";
import { tempDir } from "../helpers/files.js";
import { OFREP_FIXTURE } from "../helpers/fixtures.js";
import { flagdServices } from "../../src/flagd/protocol.js";

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
  flagdPort = Number(cli.stdout().match(/^ {2}flagd gRPC port (\d+) /m)?.[1]);
});

afterAll(async () => {
  await cli?.stop();
});

describe("flagserve serve --flagd-port", () => {
  it("serves flagd's evaluation service on the port the banner names; the opted-in name selects", async () => {
    expect(flagdPort).toBeGreaterThan(0);
    const client = new (makeClientConstructor(flagdServices().evaluation.v2, "flagd"))(
      `127.0.0.1:${flagdPort}`,
      credentials.createInsecure(),
    );
    const metadata = new Metadata();
    metadata.set("flagd-selector", "test");
    const answer = await new Promise<{ error: ServiceError | null; response?: unknown }>((resolve) =>
      (
        client as unknown as { ResolveBoolean: (r: unknown, m: Metadata, cb: (e: ServiceError | null, r?: unknown) => void) => void }
      ).ResolveBoolean({ flagKey: "bool-flag" }, metadata, (error, response) => resolve({ error, response })),
    );
    client.close();
    expect(answer.error).toBeNull();
    expect(answer.response).toMatchObject({ value: true, reason: "STATIC", variant: "on" });
  });

  it("--max-streams-per-ip holds for the flagd streams too", async () => {
    const client = new (makeClientConstructor(flagdServices().sync, "flagd"))(`127.0.0.1:${flagdPort}`, credentials.createInsecure());
    type Stream = NodeJS.EventEmitter & { cancel(): void };
    const open = () => (client as unknown as { SyncFlags(request: unknown): Stream }).SyncFlags({ selector: "test" });
    const first = open();
    await new Promise((resolve) => first.once("data", resolve));
    const second = open();
    const error = await new Promise<ServiceError>((resolve) => second.once("error", resolve));
    expect(error.details).toMatch(/too many open streams from 127\.0\.0\.1 \(at most 1\)/);
    first.on("error", () => undefined);
    first.cancel();
    client.close();
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
