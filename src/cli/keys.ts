/** `flagserve keys [list]`, `keys rotate ENV`, `keys revoke ENV` and `keys dir`. */
import { Command, Option } from "commander";
import { sourceKindOf } from "../sources/source.js";
import { adminCall, parseAdminUrl, runAdminAction, withAdminToken, type AdminConnection } from "./admin-client.js";
import { escapeControls } from "../log/escape.js";
import { STATE_DIR_HELP, displayPath, err, out } from "./paths.js";
import { SOURCES_ARGUMENT_HELP, loadOnce, resolveSources } from "./sources.js";

interface KeysFlags {
  stateDir?: string;
  revokeNow?: boolean;
}

/** The state directory of the configuration the SOURCE arguments name (the server's rule: store/state-dir.ts). */
async function stateDirOf(args: readonly string[], flags: KeysFlags): Promise<string> {
  const { defaultStateDir } = await import("../store/state-dir.js");
  return flags.stateDir ?? defaultStateDir(resolveSources(args).specs);
}

async function loadForKeys(args: readonly string[], flags: KeysFlags) {
  const { specs } = resolveSources(args);
  const [load, stateDir] = await Promise.all([loadOnce(specs), stateDirOf(args, flags)]);
  return { load, stateDir };
}

export function keysCommand(): Command {
  const keys = new Command("keys").description("list or rotate the API keys of the environments").addHelpText(
    "after",
    `
Examples:
  $ npx flagserve keys                        list the keys of ./flags (same as: keys list)
  $ npx flagserve keys list config/flags.yaml
  $ npx flagserve keys rotate production      new key for production; a running server switches to it
  $ npx flagserve keys revoke production      the running server stops accepting production's old keys now
  $ npx flagserve keys dir                    where ./flags keeps its state (keys, admin token)
The same SOURCE arguments as the server's name the same state directory (see docs/state.md).`,
  );

  keys
    .command("list", { isDefault: true })
    .description("print each environment with its API key (generating missing ones) and where it is kept")
    .argument("[sources...]", SOURCES_ARGUMENT_HELP)
    .option("--state-dir <dir>", STATE_DIR_HELP)
    .addHelpText(
      "after",
      `
Output: "<env>  <key>  (file|state)" per environment on stdout: "file" when the key is written
in the environment's file, "state" when it was generated and kept in the state directory.
Exit status: 0, or 1 when an environment has problems (they are listed on stderr).

Examples:
  $ npx flagserve keys list
  $ npx flagserve keys list ./flags --state-dir /var/lib/flagserve`,
    )
    .action(refusingState("keys list", listKeys));

  keys
    .command("rotate")
    .description("replace an environment's API key; a running server announces it and revokes the old one")
    .argument("<env>", "the environment")
    .argument("[sources...]", SOURCES_ARGUMENT_HELP)
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
learns it from the state directory, so it must use the same one (same SOURCE arguments, or
the same --state-dir). When no running server recorded itself there, --revoke-now says so and
exits 1 (the new key is written all the same): revoke on that server with keys revoke.
Exit status: 0, 1 when the environment is unknown or has problems (or --revoke-now found no
running server), 2 usage error.

Examples:
  $ npx flagserve keys rotate production
  $ npx flagserve keys rotate staging config/flags.yaml
  $ npx flagserve keys rotate production --revoke-now   the old key leaked: revoke it now`,
    )
    .action(refusingState("keys rotate", rotateEnvironmentKey));

  withAdminToken(
    keys
      .command("revoke")
      .description(
        "the running server stops accepting ENV's replaced keys now, ending their grace (e.g. after editing a leaked apiKey in its file)",
      )
      .argument("<env>", "the environment")
      .argument("[sources...]", SOURCES_ARGUMENT_HELP)
      .addOption(
        new Option("--url <url>", "the running server (default: the one recorded in the state directory)").argParser(parseAdminUrl),
      ),
  )
    .addHelpText(
      "after",
      `
A replaced key (apiKey edited in the file, or keys rotate) keeps working for the server's
--key-grace (default 3600 s). This ends that grace for every replaced key of ENV and closes
the event streams opened with them; the current key is not touched. The server is the one
recorded in the configuration's state directory (or --url with --admin-token).
Output: "<env>  <n> old key(s) revoked". Exit status: 0, 1 refused or unreachable, 2 usage error.

Examples:
  $ npx flagserve keys revoke production
  $ npx flagserve keys revoke production config/flags.yaml
  $ npx flagserve keys revoke production --url http://127.0.0.1:8080 --admin-token "$TOKEN"`,
    )
    .action(
      runAdminAction("keys revoke")(async (env: string, args: string[], flags: AdminConnection) => {
        const result = await adminCall(
          { ...flags, stateDir: await stateDirOf(args, flags) },
          "POST",
          `/keys/${encodeURIComponent(env)}/revoke-old`,
        );
        out(escapeControls(`${env}  ${String(result.revoked)} old key(s) revoked`));
      }),
    );

  keys
    .command("dir")
    .description("print the state directory of the configuration (generated keys, admin token, the running server's URL)")
    .argument("[sources...]", SOURCES_ARGUMENT_HELP)
    .option("--state-dir <dir>", STATE_DIR_HELP)
    .addHelpText(
      "after",
      `
Output: the directory, one line on stdout (it may not exist yet). See docs/state.md.

Examples:
  $ npx flagserve keys dir
  $ cat "$(npx flagserve keys dir config/flags.yaml)/admin-token"`,
    )
    .action(async (args: string[], flags: KeysFlags) => out(await stateDirOf(args, flags)));

  return keys;
}

/** A state directory or file refused (not private): its message, exit status 1, no stack trace. */
const refusingState =
  <A extends unknown[]>(name: string, action: (...args: A) => Promise<void>) =>
  async (...args: A): Promise<void> => {
    const { StateDirError } = await import("../store/state-dir.js");
    try {
      await action(...args);
    } catch (error) {
      if (!(error instanceof StateDirError)) throw error;
      err(`flagserve ${name}: ${error.message}`);
      process.exitCode = 1;
    }
  };

/** `keys list`: each environment with its key, and where the key is kept. */
async function listKeys(args: string[], flags: KeysFlags): Promise<void> {
  const [{ load, stateDir }, { resolveKeys }, { formatProblem }] = await Promise.all([
    loadForKeys(args, flags),
    import("../store/keys.js"),
    import("../model/types.js"),
  ]);
  const environments = [...load.environments.values()].map((e) => e.config);
  const { keys: resolved, persistError } = await resolveKeys(stateDir, environments);
  const width = Math.max(0, ...environments.map((e) => e.name.length));
  for (const env of environments) {
    const where = env.apiKey !== undefined ? "file" : "state";
    out(escapeControls(`${env.name.padEnd(width)}  ${resolved.get(env.name)}  (${where})`));
  }
  if (persistError) err(`warning: generated keys could not be saved in ${stateDir} (${persistError.message}); they will change`);
  for (const [env, problems] of load.problems) {
    for (const problem of problems) err(formatProblem({ ...problem, file: displayPath(problem.file) }));
    if (env !== "") err(`${env}: not listed, it has problems`);
  }
  if (load.problems.size > 0) process.exitCode = 1;
}

/** `keys rotate ENV`: a new key, written where the old one was. */
async function rotateEnvironmentKey(env: string, args: string[], flags: KeysFlags): Promise<void> {
  const [{ load, stateDir }, { rotateKey }] = await Promise.all([loadForKeys(args, flags), import("../store/rotate.js")]);
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
    err(
      `flagserve keys rotate: cannot rotate the key of '${env}': it is written in ${written}, which flagserve cannot write; change it there`,
    );
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
  out(escapeControls(`${rotation.env}  ${rotation.key}  (written to ${displayPath(rotation.file)})`));
  if (flags.revokeNow) await reportRevocation(env, stateDir);
}

/**
 * --revoke-now reaches only a server that reads this state directory: one that recorded its URL
 * there. Without one, a server elsewhere keeps the old key for its grace: say so, exit 1.
 */
async function reportRevocation(env: string, stateDir: string): Promise<void> {
  const { isRunning, readServerRecords } = await import("../admin/records.js");
  const urls = (await readServerRecords(stateDir)).filter((r) => isRunning(r.pid)).map((r) => r.url);
  if (urls.length > 0) {
    const which = urls.length === 1 ? `the server at ${urls[0]} reads` : `the servers at ${urls.join(", ")} read`;
    err(
      `${which} ${stateDir}: ${urls.length === 1 ? "it stops" : "they stop"} accepting the old key as soon as ${urls.length === 1 ? "it loads" : "they load"} the new one`,
    );
    return;
  }
  err(
    `flagserve keys rotate: --revoke-now: no running server recorded itself in ${stateDir}, so none will see the revocation (a server started later knows only the new key). A server running with another --state-dir keeps the old key for its --key-grace: run flagserve keys revoke ${env} --state-dir DIR (its directory) or with --url and --admin-token`,
  );
  process.exitCode = 1;
}
