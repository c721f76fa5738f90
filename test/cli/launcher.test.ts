/** Watching the processes that started flagserve for npm: real processes, really ended. */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { isGone, isNpm, npmLaunchers, procInfo, processInfo, psInfo, watchProcesses } from "../../src/cli/launcher.js";

describe("launcher watch", () => {
  it("is off when not started by npm (no npm_lifecycle_event)", () => {
    expect(npmLaunchers({}, process.ppid)).toEqual([]);
  });

  it("reads a process's parent and command line, from /proc and from ps alike", () => {
    const self = processInfo(process.pid);
    expect(self?.ppid).toBe(process.ppid);
    expect(self?.command).toContain(process.execPath.split("/").at(-1));
    if (process.platform === "linux") {
      expect(procInfo(process.pid)?.state).toBe("R");
      // The path other Unix systems take; ps is there on Linux too.
      expect(psInfo(process.pid)).toEqual({ ppid: process.ppid, state: "", command: procInfo(process.pid)!.command });
    }
    expect(processInfo(2 ** 22 + 12345)).toBeUndefined();
  });

  it("recognises npm by its process title or its script", () => {
    for (const title of [
      "npm exec flagserve --port 0",
      "npm run serve",
      "npm",
      "npx flagserve",
      "node /usr/lib/node_modules/npm/bin/npm-cli.js exec flagserve",
    ]) {
      expect(isNpm(title), title).toBe(true);
    }
    for (const title of ["sh -c flagserve", "node /app/node_modules/.bin/flagserve", "npmx", "pnpm exec flagserve"])
      expect(isNpm(title), title).toBe(false);
  });

  it("notices a watched process that ends, once, and not before", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" });
    await new Promise((r) => child.once("spawn", r));
    const pid = child.pid!;
    expect(isGone(pid)).toBe(false);
    const seen: number[] = [];
    const gone = new Promise<void>((resolve) =>
      watchProcesses(
        [process.pid, pid],
        (p) => {
          seen.push(p);
          resolve();
        },
        50,
      ),
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(seen).toEqual([]);
    child.kill("SIGKILL");
    await gone;
    await new Promise((r) => setTimeout(r, 200));
    expect(seen).toEqual([pid]);
    expect(isGone(pid)).toBe(true);
  });
});
