/** The records a server keeps of itself in the state directory (src/admin/records.ts). */
import { join } from "node:path";
import { expect, it } from "vitest";
import { forgetServer, readServerRecords, recordServer } from "../../src/admin/records.js";
import { tempDir } from "../helpers/files.js";

it("two servers of one process on the default ports of http and https keep a record each, and each forgets only its own", async () => {
  const state = join((await tempDir()).path, "state");
  const http = await recordServer(state, "http://127.0.0.1");
  const https = await recordServer(state, "https://127.0.0.1");
  expect(new Set([http, https]).size).toBe(2);
  expect((await readServerRecords(state)).map((r) => r.url).sort()).toEqual(["http://127.0.0.1", "https://127.0.0.1"]);
  await forgetServer(state, https);
  expect((await readServerRecords(state)).map((r) => r.url)).toEqual(["http://127.0.0.1"]);
});
