/**
 * The README's CI-fixture section tells a reader to run the example with a vitest command in the
 * clone: run that command as written (a vitest of its own, in the clone, with the project's
 * config) and check that it finds the example and passes it. The command filters the files the
 * config includes, so its finding the example also means `npm test` runs it.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const README = readFileSync(`${ROOT}README.md`, "utf8");

it("the README's `npx vitest run examples/…` command finds the example and passes it", async () => {
  const commands = [...README.matchAll(/`(npx vitest run (examples\/\S+\.test\.ts))`/g)];
  expect(commands.length).toBeGreaterThan(0);
  for (const [, command, file] of commands) {
    // The child is a vitest of its own: leave out the variables this run's workers carry.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^VITEST/.test(name)));
    const ran = await new Promise<{ code: number; output: string }>((resolve) =>
      execFile("/bin/sh", ["-c", command!], { cwd: ROOT, env: { ...env, NO_COLOR: "1" } }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
      ),
    );
    expect(ran.code, ran.output).toBe(0);
    expect(ran.output).toContain(file);
    expect(ran.output).toMatch(/Test Files\s+1 passed \(1\)/);
    expect(ran.output).not.toMatch(/failed/);
  }
}, 60_000);
