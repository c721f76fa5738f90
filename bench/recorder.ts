/**
 * The evaluation recorder under a hostile client with a key: the attack pass's load, sent over
 * HTTP to the built CLI (started with --max-old-space-size=512, as the attack pass did) —
 * --requests single-flag evaluations (default 9 000), each with `X-Flagserve-Session` naming one
 * of 100 sessions and a context just under 8 KiB of `{"a":[{},{},...]}` (some 2 700 objects).
 *
 *   recorder   the bytes the recorder counts (GET /api/v1/admin/sessions, summed): at most its
 *              64 MiB bound
 *   RSS        the server's resident memory before the load, after it, and its peak
 *
 *   npm run bench:recorder
 *   npm run bench:recorder -- --requests 2000    # a quick check
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BIN, header, KEY, memoryOf, printTable, startNode, stop, withTempDir } from "./lib.js";

const { values } = parseArgs({ options: { requests: { type: "string", default: "9000" } } });
const requests = Number(values.requests);
const ADMIN_TOKEN = "bench-admin-token-0123456789";
const SESSIONS = 100;
const PARALLEL = 16;

const MiB = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

header(`${requests} evaluations with 8 KiB contexts of empty objects, over ${SESSIONS} sessions`);
await withTempDir(async (dir) => {
  await writeFile(
    join(dir, "flags.yaml"),
    `apiKey: ${KEY}\nflags:\n  f:\n    variants: { "on": true, "off": false }\n    defaultVariant: "off"\n`,
  );
  const server = await startNode(
    BIN,
    [join(dir, "flags.yaml"), "--port", "0", "--quiet", "--state-dir", join(dir, "state"), "--admin-token", ADMIN_TOKEN],
    "inherit",
    { nodeArgs: ["--max-old-space-size=512"] },
  );
  try {
    const pid = server.child.pid!;
    const before = memoryOf(pid).rss;
    const body = `{"context":{"a":[${Array(2720).fill("{}").join(",")}]}}`;
    let next = 0;
    let failed = 0;
    const worker = async () => {
      for (let i = next++; i < requests; i = next++) {
        const response = await fetch(`${server.url}/ofrep/v1/evaluate/flags/f`, {
          method: "POST",
          headers: { "x-api-key": KEY, "x-flagserve-session": `s${i % SESSIONS}`, "content-type": "application/json" },
          body,
        }).catch(() => undefined);
        if (response?.status !== 200) failed++;
        await response?.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    const after = memoryOf(pid);
    const listed = (await (
      await fetch(`${server.url}/api/v1/admin/sessions`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).json()) as { sessions: { bytes: number }[] };
    const counted = listed.sessions.reduce((sum, s) => sum + s.bytes, 0);
    printTable(
      ["recorder (MiB)", "RSS before (MiB)", "RSS after (MiB)", "RSS peak (MiB)", "failed requests", "server"],
      [[MiB(counted), MiB(before), MiB(after.rss), MiB(after.peak), failed, server.child.exitCode === null ? "up" : "died"]],
    );
  } finally {
    await stop(server.child);
  }
});
