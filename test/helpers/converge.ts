/**
 * Rapid edit sequences against a running server, and the checks that it converged: the served
 * flags (over HTTP) equal the files, and the change log's last word per flag is the final value.
 */
import {
  copyFileSync,
  openSync,
  closeSync,
  ftruncateSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writeSync,
  mkdirSync,
  symlinkSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { EnvironmentChange } from "../../src/changes/reload.js";

/** Flag key -> the number it serves (`variants: { v: N }`). */
export type Flags = Record<string, number>;

export const flagFile = (apiKey: string, flags: Flags): string =>
  [
    `apiKey: ${apiKey}`,
    "flags:",
    ...Object.entries(flags).map(([k, v]) => `  ${k}:\n    variants: { v: ${v} }\n    defaultVariant: v`),
    "",
  ].join("\n");

export type WriteMethod = (file: string, text: string) => Promise<void>;

/** The ways files get written: editors, `cp`, scripts, git. */
export const writeMethods: Record<string, WriteMethod> = {
  /** `cp new file`: the text copied over the original in place (same inode). */
  "copied over in place": async (file, text) => {
    const tmp = join(dirname(dirname(file)), `.${basename(file)}.new`);
    writeFileSync(tmp, text);
    copyFileSync(tmp, file);
  },
  /** Truncated, then written a moment later (an empty file in between). */
  "truncate, then write": async (file, text) => {
    const fd = openSync(file, "r+");
    try {
      ftruncateSync(fd, 0);
      await sleep(Math.random() * 5);
      writeSync(fd, text, 0);
    } finally {
      closeSync(fd);
    }
  },
  /** Written to a temp file beside it and renamed over (most editors, atomic writers). */
  "renamed over": async (file, text) => {
    const tmp = join(dirname(file), `.${basename(file)}.tmp`);
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  },
  /** Deleted, then created again (a missing file in between). */
  "deleted and re-created": async (file, text) => {
    unlinkSync(file);
    await sleep(Math.random() * 5);
    writeFileSync(file, text);
  },
};

/** A small deterministic random source (a failing sequence can be replayed from its seed). */
export function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

/** The next version of a flag set: some values changed, maybe one flag added or removed. */
export function mutate(flags: Flags, rand: () => number, next: () => number): Flags {
  const out = { ...flags };
  const keys = Object.keys(out);
  const roll = rand();
  if (roll < 0.2 && keys.length > 1) delete out[keys[Math.floor(rand() * keys.length)]!];
  else if (roll < 0.4) out[`f${Math.floor(rand() * 8)}`] = next();
  else out[keys[Math.floor(rand() * keys.length)] ?? "f0"] = next();
  return out;
}

/** What the server serves for an environment, over HTTP: flag key -> value. */
export async function servedFlags(url: string, apiKey: string): Promise<Flags | undefined> {
  const res = await fetch(`${url}/ofrep/v1/evaluate/flags`, {
    method: "POST",
    headers: { "x-api-key": apiKey, "content-type": "application/json" },
    body: "{}",
  });
  if (res.status !== 200) return undefined;
  const body = (await res.json()) as { flags: { key: string; value: number }[] };
  return Object.fromEntries(body.flags.map((f) => [f.key, f.value]));
}

/** Waits (bounded) until every environment serves what its file says; returns what was last served. */
export const keyOf = (env: string): string => `${env}-key-0123456789`;

export async function waitServed(
  url: string,
  expected: Record<string, Flags>,
  timeoutMs = 5000,
): Promise<Record<string, Flags | undefined>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const served: Record<string, Flags | undefined> = {};
    for (const env of Object.keys(expected)) served[env] = await servedFlags(url, keyOf(env));
    if (JSON.stringify(sortFlags(served)) === JSON.stringify(sortFlags(expected)) || Date.now() > deadline) return served;
    await sleep(20);
  }
}

const sortFlags = (byKey: Record<string, Flags | undefined>) =>
  Object.fromEntries(
    Object.entries(byKey).map(([k, f]) => [k, f && Object.fromEntries(Object.entries(f).sort(([a], [b]) => a.localeCompare(b)))]),
  );

/** Every flag change the server applied (the same changes its SSE events announce), by environment and flag. */
export class ChangeLog {
  readonly byFlag = new Map<string, (number | undefined)[]>();
  count = 0;

  record = (changes: EnvironmentChange[]): void => {
    for (const { env, changes: list } of changes) {
      for (const c of list) {
        if (c.kind !== "flag") continue;
        const value = c.after ? (c.after.variants as Record<string, number>).v : undefined;
        const key = `${env}/${c.key}`;
        this.byFlag.set(key, [...(this.byFlag.get(key) ?? []), value]);
        this.count++;
      }
    }
  };

  /** Problems with the log against the initial and final states and every value written. */
  check(initial: Record<string, Flags>, final: Record<string, Flags>, written: Map<string, Set<number>>): string[] {
    const problems: string[] = [];
    const envs = new Set([...Object.keys(initial), ...Object.keys(final)]);
    for (const env of envs) {
      const keys = new Set([...Object.keys(initial[env] ?? {}), ...Object.keys(final[env] ?? {})]);
      for (const key of keys) {
        const log = this.byFlag.get(`${env}/${key}`) ?? [];
        const last = log.length > 0 ? log.at(-1) : initial[env]?.[key];
        if (last !== final[env]?.[key])
          problems.push(`${env}/${key}: last word ${last}, file says ${final[env]?.[key]} (log ${JSON.stringify(log)})`);
      }
    }
    for (const [flag, log] of this.byFlag) {
      for (const [i, value] of log.entries()) {
        if (value !== undefined && !written.get(flag)?.has(value)) problems.push(`${flag}: announced ${value}, which was never written`);
        if (i > 0 && value === log[i - 1]) problems.push(`${flag}: announced ${value} twice in a row`);
      }
    }
    return problems;
  }
}

/** Notes every value each flag was given. */
export function noteWritten(written: Map<string, Set<number>>, env: string, flags: Flags): void {
  for (const [key, value] of Object.entries(flags)) {
    const set = written.get(`${env}/${key}`) ?? new Set<number>();
    set.add(value);
    written.set(`${env}/${key}`, set);
  }
}

/** Kubernetes AtomicWriter: files in `..<n>/`, `..data -> ..<n>`, `<file> -> ..data/<file>`; an update swaps `..data`. */
export function configMapWrite(dir: string, generation: number, files: Record<string, string>): void {
  const stamp = `..gen_${generation}`;
  mkdirSync(join(dir, stamp));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, stamp, name), text);
  symlinkSync(stamp, join(dir, "..data_tmp"));
  renameSync(join(dir, "..data_tmp"), join(dir, "..data"));
  if (generation > 0) rmSync(join(dir, `..gen_${generation - 1}`), { recursive: true, force: true });
  else for (const name of Object.keys(files)) symlinkSync(join("..data", name), join(dir, name));
}
