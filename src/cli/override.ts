/**
 * `flagserve override set|clear|list`: overrides on a running server, through its admin API.
 * The token: --admin-token, else FLAGSERVE_ADMIN_TOKEN, else the one the server keeps in its
 * state directory, sent only to the URL recorded beside it (admin-client.ts). Exit status: 0 done, 1 refused or unreachable, 2 usage error.
 */
import { Command, Option } from "commander";
import { adminCall, parseAdminUrl, runAdminAction, withAdminToken, type AdminConnection } from "./admin-client.js";
import { escapeControls, escapeLines } from "../log/escape.js";
import { out } from "./paths.js";

const overrideText = (override: Record<string, unknown>): string =>
  typeof override.variant === "string" ? `variant ${override.variant}` : String(override.state).toLowerCase();

const run = runAdminAction("override");

function withConnection(command: Command): Command {
  return withAdminToken(
    command.addOption(
      new Option("--url <url>", "the running server (default: the one recorded in the state directory)").argParser(parseAdminUrl),
    ),
  );
}

export function overrideCommand(): Command {
  const override = new Command("override").description("set, clear or list overrides on a running server (its admin API)").addHelpText(
    "after",
    `
Examples:
  $ npx flagserve override set new-checkout on --env development
  $ npx flagserve override set new-checkout --disable --env development
  $ npx flagserve override clear new-checkout --env development
  $ npx flagserve override clear --env development      all overrides of development
  $ npx flagserve override list --url http://127.0.0.1:8080
Exit status: 0 done, 1 refused by the server (unknown flag, variant, environment, token) or unreachable, 2 usage error.`,
  );
  addSet(override);
  addClear(override);
  addList(override);
  return override;
}

function addSet(override: Command): void {
  withConnection(
    override
      .command("set")
      .description("make every evaluation of FLAG in ENV return VARIANT (targeting bypassed), or disable it")
      .argument("<flag>", "the flag key")
      .argument("[variant]", "the variant to serve")
      .requiredOption("-e, --env <env>", "the environment")
      .option("--disable", "disable the flag instead of choosing a variant"),
  ).action(
    run(
      async (flag: string, variant: string | undefined, flags: AdminConnection & { env: string; disable?: boolean }, command: Command) => {
        if ((variant === undefined) === !flags.disable) command.error("error: give a VARIANT or --disable (not both)", { exitCode: 2 });
        const body = flags.disable ? { state: "DISABLED" } : { variant };
        await adminCall(flags, "PUT", `/environments/${encodeURIComponent(flags.env)}/overrides/${encodeURIComponent(flag)}`, body);
        out(escapeControls(`${flags.env}  ${flag}  ${flags.disable ? "disabled" : `variant ${variant}`}`));
      },
    ),
  );
}

function addClear(override: Command): void {
  withConnection(
    override
      .command("clear")
      .description("return FLAG (or, without FLAG, every flag of ENV) to its file definition")
      .argument("[flag]", "the flag key (default: all overrides of the environment)")
      .requiredOption("-e, --env <env>", "the environment"),
  ).action(
    run(async (flag: string | undefined, flags: AdminConnection & { env: string }) => {
      const env = encodeURIComponent(flags.env);
      if (flag !== undefined) {
        const result = await adminCall(flags, "DELETE", `/environments/${env}/overrides/${encodeURIComponent(flag)}`);
        out(escapeControls(`${flags.env}  ${flag}  ${result.removed ? "cleared" : "had no override"}`));
        return;
      }
      const result = await adminCall(flags, "DELETE", `/environments/${env}/overrides`);
      const removed = result.removed as string[];
      out(escapeLines(removed.length === 0 ? [`${flags.env}: no overrides`] : removed.map((key) => `${flags.env}  ${key}  cleared`)));
    }),
  );
}

function addList(override: Command): void {
  withConnection(
    override
      .command("list", { isDefault: true })
      .description("print every override: ENV FLAG WHAT")
      .option("--json", "print the JSON the server returns"),
  ).action(
    run(async (flags: AdminConnection & { json?: boolean }) => {
      const { overrides } = (await adminCall(flags, "GET", "/overrides")) as {
        overrides: Record<string, Record<string, Record<string, unknown>>>;
      };
      if (flags.json) return out(JSON.stringify(overrides));
      const rows = Object.entries(overrides).flatMap(([env, list]) =>
        Object.entries(list).map(([key, o]) => `${env}  ${key}  ${overrideText(o)}`),
      );
      // Flag keys and variants from the files: each row escaped whole, so none can fake a row.
      if (rows.length > 0) out(escapeLines(rows));
    }),
  );
}
