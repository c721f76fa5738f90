/**
 * Clients that open an event stream and never read: the server's memory (RSS) and the kernel
 * send queues of its sockets, before the clients, with them connected, and after edits have
 * pushed every one of them past the 1 MiB backlog bound.
 *
 *   node --import tsx bench/slow-clients.ts                      # 200 clients, 2 rounds, this checkout's CLI
 *   node --import tsx bench/slow-clients.ts --clients 50 --bin ../other/bin/flagserve.js
 */
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    clients: { type: "string", default: "200" },
    edits: { type: "string", default: "80" },
    rounds: { type: "string", default: "2" },
    bin: { type: "string", default: fileURLToPath(new URL("../bin/flagserve.js", import.meta.url)) },
  },
});
const clients = Number(values.clients);
const KEY = "slow-bench-key-0123456789";
const FLAGS = 2000; // every edit flips them all: one flag-updated event each, about 180 KB per edit
const file = (variant: string) =>
  `apiKey: ${KEY}\nflags:\n${Array.from({ length: FLAGS }, (_, i) => `  flag-${i}:\n    variants: { a: true, b: false }\n    defaultVariant: ${variant}\n`).join("")}`;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

const rss = (pid: number) => Number(readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/)![1]) * 1024;

/** Bytes queued in the kernel for sending on the server's sockets, and how many are open (ss). */
function sendQueues(port: number): { sockets: number; bytes: number } {
  const out = execFileSync("ss", ["-tnH", "state", "established", `( sport = :${port} )`], { encoding: "utf8" });
  const lines = out.trim().split("\n").filter(Boolean);
  return { sockets: lines.length, bytes: lines.reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[1]), 0) };
}

function slowClient(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    socket.once("data", () => {
      socket.pause(); // never read again
      resolve(socket);
    });
    socket.once("close", () => reject(new Error("closed before answering")));
    socket.write(`GET /api/v1/flags/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${KEY}\r\n\r\n`);
  });
}

const dir = await mkdtemp(join(tmpdir(), "flagserve-slow-"));
await mkdir(join(dir, "flags"));
await writeFile(join(dir, "flags/dev.yaml"), file("a"));
const child = spawn(process.execPath, [values.bin, join(dir, "flags"), "--port", "0", "-q", "--state-dir", join(dir, "state")], {
  stdio: ["ignore", "pipe", "ignore"],
});
try {
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c;
      const m = out.match(/ready (\S+)/);
      if (m) resolve(m[1]!);
    });
    child.once("exit", () => reject(new Error("flagserve exited")));
  });
  const port = Number(new URL(url).port);
  await pause(500);
  const report = (label: string) => {
    const q = sendQueues(port);
    console.log(
      `${label.padEnd(34)} RSS ${mb(rss(child.pid!)).padStart(7)}   open sockets ${String(q.sockets).padStart(4)}   kernel send queues ${mb(q.bytes)}`,
    );
  };
  report("before any client");

  // Two rounds: memory freed after the first is reused by the second instead of adding to it.
  for (let round = 1; round <= Number(values.rounds); round++) {
    const sockets: Socket[] = [];
    for (let i = 0; i < clients; i++) sockets.push(await slowClient(port));
    report(`round ${round}: ${clients} clients connected`);
    for (let i = 0; i < Number(values.edits); i++) {
      await writeFile(join(dir, "flags/dev.yaml"), file(i % 2 === 0 ? "b" : "a"));
      await pause(250);
    }
    await pause(2000);
    report(`round ${round}: after ${values.edits} edits`);
    for (const socket of sockets) socket.destroy();
    await pause(1000);
  }
} finally {
  child.kill("SIGTERM");
  await rm(dir, { recursive: true, force: true });
}
