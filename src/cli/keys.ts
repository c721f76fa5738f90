/** `flagserve keys [list]` and `flagserve keys rotate ENV`. */
import { Command } from "commander";
import { sourceKindOf } from "../sources/source.js";
import { PATH_ARGUMENT_HELP, STATE_DIR_HELP, displayPath, err, out, resolveConfigPath } from "./paths.js";
import { loadOnce } from "./sources.js";

interface KeysFlags {
  stateDir?: string;
  revokeNow?: boolean;
}


async function loadForKeys(pathArg: string | undefined, flags: KeysFlags) {
  const { defaultStateDirOf } = await import("../store/state-dir.js");
  const { path } = resolveConfigPath(pathArg);
  const load = await loadOnce([path]);
  return { path, load, stateDir: flags.stateDir ?? defaultStateDirOf([{ id: path, kind: sourceKindOf(path) }]) };
}

export function keysCommand(): Command {
  const keys = new Command("keys").description("list or rotate the API keys of the environments").addHelpText(
    "after",
    `
Examples:
  $ flagserve keys                        list the keys of ./flags (same as: keys list)
  $ flagserve keys list config/flags.yaml
  $ flagserve keys rotate production      new key for production; a running server switches to it`,
  );

  keys
    .command("list", { isDefault: true })
    .description("print each environment with its API key (generating missing ones) and where it is kept")
    .argument("[path]", PATH_ARGUMENT_HELP)
    .option("--state-dir <dir>", STATE_DIR_HELP)
    .addHelpText(
      "after",
      `
Output: "<env>  <key>  (file|state)" per environment on stdout: "file" when the key is written
in the environment's file, "state" when it was generated and kept in the state directory.
Exit status: 0, or 1 when an environment has problems (they are listed on stderr).

Examples:
  $ flagserve keys list
  $ flagserve keys list ./flags --state-dir /var/lib/flagserve`,
    )
    .action(listKeys);

  keys
    .command("rotate")
    .description("replace an environment's API key; a running server announces it and revokes the old one")
    .argument("<env>", "the environment")
    .argument("[path]", PATH_ARGUMENT_HELP)
    .option("--state-dir <dir>", STATE_DIR_HELP)
    .option("--revoke-now", "the running server stops accepting the old key at once, whatever its --key-grace (for a leaked key)")
    .addHelpText(
      "after",
      `
A key written in the environment's file is replaced there: only the key's characters
change, a symlinked file is written through the link, and its mode and owner are kept. A
generated key is replaced in the state directory. A running server notices, sends
config-updated {"reason":"api-key-rotated"} and api-key-rotated {"validUntil",...} on the
environment's streams and, after its --key-grace (default 3600 s), stops accepting the old key
and closes the streams opened with it. With --revoke-now that happens at once; the server
learns it from the state directory, so it must use the same --state-dir.
Exit status: 0, 1 when the environment is unknown or has problems, 2 usage error.

Examples:
  $ flagserve keys rotate production
  $ flagserve keys rotate staging config/flags.yaml
  $ flagserve keys rotate production --revoke-now   the old key leaked: revoke it now`,
    )
    .action(rotateEnvironmentKey);

  return keys;
}

/** `keys list`: each environment with its key, and where the key is kept. */
async function listKeys(pathArg: string | undefined, flags: KeysFlags): Promise<void> {
  const [{ load, stateDir }, { resolveKeys }, { formatProblem }] = await Promise.all([
    loadForKeys(pathArg, flags),
    import("../store/keys.js"),
    import("../model/types.js"),
  ]);
  const environments = [...load.environments.values()].map((e) => e.config);
  const { keys: resolved, persistError } = await resolveKeys(stateDir, environments);
  const width = Math.max(0, ...environments.map((e) => e.name.length));
  for (const env of environments) {
    const where = env.apiKey !== undefined ? "file" : "state";
    out(`${env.name.padEnd(width)}  ${resolved.get(env.name)}  (${where})`);
  }
  if (persistError) err(`warning: generated keys could not be saved in ${stateDir} (${persistError.message}); they will change`);
  for (const [env, problems] of load.problems) {
    for (const problem of problems) err(formatProblem({ ...problem, file: displayPath(problem.file) }));
    if (env !== "") err(`${env}: not listed, it has problems`);
  }
  if (load.problems.size > 0) process.exitCode = 1;
}

/** `keys rotate ENV`: a new key, written where the old one was. */
async function rotateEnvironmentKey(env: string, pathArg: string | undefined, flags: KeysFlags): Promise<void> {
  const [{ load, stateDir }, { rotateKey }] = await Promise.all([loadForKeys(pathArg, flags), import("../store/rotate.js")]);
  const loaded = load.environments.get(env);
  if (!loaded) {
    const known = [...load.environments.keys()].join(", ") || "none";
    const why = load.problems.has(env) ? "it has problems; fix them first (flagserve validate)" : `no such environment (known: ${known})`;
    err(`flagserve keys rotate: cannot rotate the key of '${env}': ${why}`);
    process.exitCode = 1;
    return;
  }
  const written = loaded.config.apiKey !== undefined ? loaded.config.files.find((file) => sourceKindOf(file) === "url") : undefined;
  if (written !== undefined) {
    err(`flagserve keys rotate: cannot rotate the key of '${env}': it is written in ${written}, which flagserve cannot write; change it there`);
    process.exitCode = 1;
    return;
  }
  if (flags.revokeNow) {
    // Recorded before the new key is written: the reload that write triggers reads it.
    const { readKeyState, recordRotation } = await import("../store/keys.js");
    const oldKey = loaded.config.apiKey ?? (await readKeyState(stateDir))[env];
    if (oldKey !== undefined) await recordRotation(stateDir, env, oldKey, 0);
  }
  const rotation = await rotateKey(loaded.config, stateDir);
  out(`${rotation.env}  ${rotation.key}  (written to ${displayPath(rotation.file)})`);
}
