/** `flagserve keys [list]` and `flagserve keys rotate ENV`. */
import { Command } from "commander";
import { loadConfig } from "../config/index.js";
import { formatProblem } from "../config/types.js";
import { resolveKeys } from "../store/keys.js";
import { rotateKey } from "../store/rotate.js";
import { defaultStateDir } from "../server.js";
import { resolveConfigPath } from "./serve.js";

interface KeysFlags {
  stateDir?: string;
}

const pathOption = "[path]";
const pathHelp = "directory of environment files, or one file (default: ./flags, else the bundled example)";

async function loadForKeys(pathArg: string | undefined, flags: KeysFlags) {
  const { path } = resolveConfigPath(pathArg);
  const load = await loadConfig(path);
  return { path, load, stateDir: flags.stateDir ?? defaultStateDir(path) };
}

export function keysCommand(): Command {
  const keys = new Command("keys").description("list or rotate the API keys of the environments");

  keys
    .command("list", { isDefault: true })
    .description("print each environment with its API key (generating missing ones)")
    .argument(pathOption, pathHelp)
    .option("--state-dir <dir>", "where generated API keys are kept (default: .flagserve beside the configuration)")
    .action(async (pathArg: string | undefined, flags: KeysFlags) => {
      const { load, stateDir } = await loadForKeys(pathArg, flags);
      const environments = [...load.environments.values()].map((e) => e.config);
      const { keys: resolved } = await resolveKeys(stateDir, environments);
      const width = Math.max(0, ...environments.map((e) => e.name.length));
      for (const env of environments) {
        const where = env.apiKey !== undefined ? "file" : "state";
        process.stdout.write(`${env.name.padEnd(width)}  ${resolved.get(env.name)}  (${where})\n`);
      }
      for (const [env, problems] of load.problems) {
        for (const problem of problems) process.stderr.write(`${formatProblem(problem)}\n`);
        if (env !== "") process.stderr.write(`${env}: not listed, it has problems\n`);
      }
      if (load.problems.size > 0) process.exitCode = 1;
    });

  keys
    .command("rotate")
    .description("replace an environment's API key; a running server announces it and revokes the old one")
    .argument("<env>", "the environment")
    .argument(pathOption, pathHelp)
    .option("--state-dir <dir>", "where generated API keys are kept (default: .flagserve beside the configuration)")
    .action(async (env: string, pathArg: string | undefined, flags: KeysFlags) => {
      const { load, stateDir } = await loadForKeys(pathArg, flags);
      const loaded = load.environments.get(env);
      if (!loaded) {
        const known = [...load.environments.keys()].join(", ") || "none";
        const why = load.problems.has(env) ? "it has problems; fix them first" : `no such environment (known: ${known})`;
        process.stderr.write(`flagserve: cannot rotate the key of '${env}': ${why}\n`);
        process.exitCode = 1;
        return;
      }
      const rotation = await rotateKey(loaded.config, stateDir);
      process.stdout.write(`${rotation.env}  ${rotation.key}  (written to ${rotation.file})\n`);
    });

  return keys;
}
