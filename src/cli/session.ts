/**
 * `flagserve session show|clear|list`: the evaluations a running server recorded for
 * `X-Flagserve-Session: ID`, through its admin API (token as for `override`). Exit status: 0
 * done, 1 refused or unreachable, 2 usage error.
 */
import { Argument, Command } from "commander";
import type { SessionSummary, SharedSessionView } from "../fixture/sessions.js";
import { adminCall, parseAdminUrl, runAdminAction, withAdminToken, type AdminConnection } from "./admin-client.js";
import { escapeControls } from "../log/escape.js";
import { out } from "./paths.js";

const run = runAdminAction("session");

/** Columns aligned with two spaces; the last one is not padded (it may be long). */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  // Cells hold text from outside (flag keys, contexts, ids): escaped whole, a newline included.
  const all = [header, ...rows].map((row) => row.map((cell) => escapeControls(cell)));
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  return all.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")).join("\n");
}

const EVALUATION_HEADER = ["FLAG", "VARIANT", "VALUE", "REASON", "ERROR", "AT", "CONTEXT"];

type SharedEvaluation = SharedSessionView["evaluations"][number];

/** One recorded evaluation as a row; `-` where there is nothing (an error has no variant or value). */
export const evaluationRow = (e: SharedEvaluation, contexts: SharedSessionView["contexts"]): string[] => [
  e.flagKey,
  e.variant ?? "-",
  e.value === undefined ? "-" : JSON.stringify(e.value),
  e.reason,
  e.errorCode ?? "-",
  e.at,
  JSON.stringify(contexts[e.contextId]) ?? "-",
];

/** The table of a session (as the admin API sends it), with a last line saying how many older entries the server dropped. */
export function formatSession(id: string, view: SharedSessionView): string {
  if (view.evaluations.length === 0) return `session ${id}: no evaluations recorded`;
  const table = formatTable(
    EVALUATION_HEADER,
    view.evaluations.map((e) => evaluationRow(e, view.contexts)),
  );
  return view.dropped === 0
    ? table
    : `${table}\n(${view.dropped} older evaluations were dropped: a session keeps its newest 10 000, within 4 MiB)`;
}

const urlArgument = () =>
  new Argument("[url]", "the running server (default: the one recorded in the state directory)").argParser(parseAdminUrl);
const sessionPath = (id: string) => `/sessions/${encodeURIComponent(id)}`;
type Flags = Omit<AdminConnection, "url"> & { json?: boolean };

export function sessionCommand(): Command {
  const session = new Command("session")
    .description("show, clear or list the evaluations a running server recorded per X-Flagserve-Session")
    .addHelpText(
      "after",
      `
Examples:
  $ npx flagserve session show checkout-test      a table: flag, variant, value, reason, error, at, context
  $ npx flagserve session show checkout-test http://127.0.0.1:8080 --json
  $ npx flagserve session clear checkout-test
  $ npx flagserve session list
Exit status: 0 done, 1 refused by the server (wrong token, bad id) or unreachable, 2 usage error.`,
    );
  withAdminToken(
    session
      .command("show")
      .description("print what session ID recorded, oldest first (an unknown session is empty; an evicted one is an error)")
      .argument("<id>", "the session id (the X-Flagserve-Session header's value)")
      .addArgument(urlArgument())
      .option("--json", 'print the server\'s JSON: {"evaluations":[...{"contextId"}],"contexts":{...},"dropped":N}'),
  ).action(
    run(async (id: string, url: string | undefined, flags: Flags) => {
      const view = (await adminCall({ ...flags, url }, "GET", sessionPath(id))) as unknown as SharedSessionView;
      out(flags.json ? JSON.stringify(view) : formatSession(id, view));
    }),
  );
  withAdminToken(
    session.command("clear").description("forget session ID").argument("<id>", "the session id").addArgument(urlArgument()),
  ).action(
    run(async (id: string, url: string | undefined, flags: Flags) => {
      const result = await adminCall({ ...flags, url }, "DELETE", sessionPath(id));
      out(`${id}  ${result.removed ? "cleared" : "had no evaluations"}`);
    }),
  );
  withAdminToken(
    session
      .command("list")
      .description("print each session: ID EVALUATIONS DROPPED LAST-ACTIVITY")
      .addArgument(urlArgument())
      .option("--json", "print the server's JSON"),
  ).action(
    run(async (url: string | undefined, flags: Flags) => {
      const result = (await adminCall({ ...flags, url }, "GET", "/sessions")) as { sessions: SessionSummary[] };
      if (flags.json) return out(JSON.stringify(result));
      const rows = result.sessions.map((s) => [s.id, String(s.evaluations), String(s.dropped), s.lastActivity]);
      if (rows.length > 0) out(formatTable(["ID", "EVALUATIONS", "DROPPED", "LAST ACTIVITY"], rows));
    }),
  );
  return session;
}
