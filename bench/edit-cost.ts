/**
 * What an edit costs the serving thread, measured inside it: its CPU time and what it allocates,
 * by V8's CPU profile and sampling heap profile over --edits edits of one flag's `defaultVariant`
 * (bench/edit-profile.cjs, preloaded). The first --warm edits are left out, so that the code's
 * first, unoptimized runs are not what is measured. One server runs at a time, so that no other
 * process shares its cores; the profilers slow every build alike, so compare the ratios.
 *
 *   100        one file of 100 flags (the baseline of the ratios)
 *   10 000     one file of 10 000 flags (about 2 MB)
 *   --against  the 10 000-flag file on another build
 *
 * Each edit waits for the new value to be served (one evaluation every 5 ms), then --pause ms
 * (the periodic check of the edit's inputs runs in it, as after any edit). Busy is the time the
 * thread ran (garbage collection included, shown apart too); allocated counts objects collected
 * since as well. The parse worker's busy time is its event loop's, measured in it (not
 * profiled). The functions that took the most time and allocated the most on the serving thread
 * are listed, to show where an edit's cost is.
 *
 *   npm run bench:edit-cost
 *   npm run bench:edit-cost -- --against ../other/bin/flagserve.js
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  BIN,
  benchFile,
  environmentYaml,
  flagKey,
  header,
  KEY,
  pause,
  printRatios,
  printTable,
  ratio,
  startNode,
  stop,
  withTempDir,
} from "./lib.js";

const { values } = parseArgs({
  options: {
    edits: { type: "string", default: "10" },
    warm: { type: "string", default: "4" },
    pause: { type: "string", default: "300" },
    against: { type: "string" },
  },
});
const EDITS = Number(values.edits);
const WARM = Number(values.warm);
const PAUSE_MS = Number(values.pause);

/** What bench/edit-profile.cjs writes: totals over the profiled edits, and the top functions ([name, ms or MB]). */
interface Profile {
  busyMs: number;
  /** The parse worker's busy time. */
  workerBusyMs: number;
  gcMs: number;
  allocatedMB: number;
  cpu: [string, number][];
  allocations: [string, number][];
}

/** The variant `flag` answers with. */
async function variantOf(url: string, flag: string): Promise<string | undefined> {
  const res = await fetch(`${url}/ofrep/v1/evaluate/flags/${flag}`, {
    method: "POST",
    headers: { "x-api-key": KEY, "content-type": "application/json" },
    body: JSON.stringify({ context: { targetingKey: "user-1" } }),
  });
  return ((await res.json()) as { variant?: string }).variant;
}

async function profileEdits(dir: string, short: string, flags: number, bin: string): Promise<Profile> {
  const root = join(dir, short);
  const file = join(root, "dev.yaml");
  const versions = [environmentYaml(flags, "off"), environmentYaml(flags, "on")] as const;
  await mkdir(root);
  await writeFile(file, versions[0]);
  const out = join(dir, `profile-${short}.json`);
  const server = await startNode(bin, [root, "--port", "0", "--quiet", "--state-dir", join(dir, `state-${short}`)], "inherit", {
    nodeArgs: ["--require", benchFile("edit-profile.cjs")],
    env: { BENCH_PROFILE_FILE: out },
  });
  try {
    await pause(2500); // start-up work done (the parse worker started, the ETags made)
    const flag = flagKey(0, flags);
    const edit = async (i: number) => {
      const variant = i % 2 === 0 ? "on" : "off";
      await writeFile(file, versions[variant === "on" ? 1 : 0]);
      for (const deadline = Date.now() + 10_000; (await variantOf(server.url, flag)) !== variant; await pause(5))
        if (Date.now() > deadline) throw new Error(`${short}: the edit was not served within 10 s`);
      await pause(PAUSE_MS);
    };
    for (let i = 0; i < WARM; i++) await edit(i);
    server.child.kill("SIGUSR2");
    await pause(200);
    for (let i = WARM; i < WARM + EDITS; i++) await edit(i);
    server.child.kill("SIGUSR2");
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await pause(50)) {
      const text = await readFile(out, "utf8").catch(() => "");
      if (text) return JSON.parse(text) as Profile;
    }
    throw new Error(`${short}: no profile within 10 s (${out})`);
  } finally {
    await stop(server.child);
  }
}

const rows: { label: string; profile: Profile }[] = [];
header(
  `${EDITS} edits per configuration (after ${WARM}), ${PAUSE_MS} ms apart, one server at a time${values.against ? `; beside: ${values.against}` : ""}`,
);
await withTempDir(async (dir) => {
  rows.push({ label: "one file of 100 flags", profile: await profileEdits(dir, "f100", 100, BIN) });
  rows.push({ label: "one file of 10 000 flags", profile: await profileEdits(dir, "f10000", 10_000, BIN) });
  if (values.against)
    rows.push({
      label: "one file of 10 000 flags, the --against build",
      profile: await profileEdits(dir, "against", 10_000, values.against),
    });
});

const perEdit = (n: number) => (n / EDITS).toFixed(1);
const [base] = rows;
printTable(
  [
    "configuration",
    "serving thread busy per edit, ms",
    "of it garbage collection, ms",
    "allocated per edit, MB",
    "parse worker busy per edit, ms",
    "busy / 100 flags",
    "allocated / 100 flags",
  ],
  rows.map(({ label, profile }) => [
    label,
    perEdit(profile.busyMs),
    perEdit(profile.gcMs),
    (profile.allocatedMB / EDITS).toFixed(2),
    perEdit(profile.workerBusyMs),
    ratio(profile.busyMs, base!.profile.busyMs),
    ratio(profile.allocatedMB, base!.profile.allocatedMB),
  ]),
);
for (const { label, profile } of rows.slice(1)) {
  console.log(`\n${label}: most time, ms per edit`);
  for (const [name, ms] of profile.cpu) console.log(`  ${(ms / EDITS).toFixed(2).padStart(7)}  ${name}`);
  console.log(`${label}: most allocated, MB per edit`);
  for (const [name, mb] of profile.allocations) console.log(`  ${(mb / EDITS).toFixed(2).padStart(7)}  ${name}`);
}
const [, big, against] = rows;
printRatios("bench:edit-cost", [
  ["busy 10000/100", ratio(big!.profile.busyMs, base!.profile.busyMs)],
  ["allocated 10000/100", ratio(big!.profile.allocatedMB, base!.profile.allocatedMB)],
  ...(against
    ? ([
        ["busy 10000/against", ratio(big!.profile.busyMs, against.profile.busyMs)],
        ["allocated 10000/against", ratio(big!.profile.allocatedMB, against.profile.allocatedMB)],
        ["worker busy 10000/against", ratio(big!.profile.workerBusyMs, against.profile.workerBusyMs)],
      ] as [string, string][])
    : []),
]);
