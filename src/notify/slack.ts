/**
 * A Slack incoming-webhook message: `text` (shown in notifications and by clients without
 * blocks) plus Block Kit `blocks` (header, one section per change, context). Pure; sizes are
 * kept under Slack's limits (50 blocks, 150-char header, 3000-char section text) so a large
 * edit still produces a message Slack accepts.
 */
import type { ChangeSummary } from "./summary.js";

export interface SlackText {
  type: "plain_text" | "mrkdwn";
  text: string;
}

export type SlackBlock =
  | { type: "header"; text: SlackText }
  | { type: "section"; text: SlackText }
  | { type: "context"; elements: SlackText[] };

export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}

/** Sections beyond this become one "…and N more" line (Slack allows 50 blocks in all). */
const MAX_SECTIONS = 40;
/** Detail lines per change, and changes listed in the `text` fallback. */
const MAX_DETAILS = 10;
const MAX_TEXT_LINES = 20;

/** Slack mrkdwn treats these three as markup; everything else is shown as is. */
export const escapeMrkdwn = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

const changeCount = (n: number): string => `${n} change${n === 1 ? "" : "s"}`;

/** "Flag `new-checkout` *updated*": the key in code style so odd characters stay readable. */
function heading(summary: ChangeSummary): string {
  if (summary.key === null) return `API key *${summary.change}*`;
  const kind = summary.kind === "flag" ? "Flag" : "Segment";
  return `${kind} \`${escapeMrkdwn(summary.key.replace(/`/g, "'"))}\` *${summary.change}*`;
}

function section(summary: ChangeSummary): SlackBlock {
  const details = summary.details.slice(0, MAX_DETAILS).map((d) => `• ${escapeMrkdwn(d)}`);
  if (summary.details.length > MAX_DETAILS) details.push(`• …and ${summary.details.length - MAX_DETAILS} more`);
  return { type: "section", text: { type: "mrkdwn", text: cut([heading(summary), ...details].join("\n"), 3000) } };
}

/** "flag new-checkout updated: defaultVariant: off -> on; targeting changed". */
const textLine = (s: ChangeSummary): string => `• ${escapeMrkdwn(`${s.subject} ${s.change}${s.details.length ? `: ${s.details.join("; ")}` : ""}`)}`;

export function slackMessage(environment: string, summaries: readonly ChangeSummary[], timestamp: Date): SlackMessage {
  const title = `${environment}: ${changeCount(summaries.length)}`;
  const lines = summaries.slice(0, MAX_TEXT_LINES).map(textLine);
  if (summaries.length > MAX_TEXT_LINES) lines.push(`• …and ${summaries.length - MAX_TEXT_LINES} more`);
  const text = [`flagserve: ${changeCount(summaries.length)} in ${escapeMrkdwn(environment)}`, ...lines].join("\n");

  const shown = summaries.length > MAX_SECTIONS ? summaries.slice(0, MAX_SECTIONS - 1) : summaries;
  const sections = shown.map(section);
  if (shown.length < summaries.length) {
    sections.push({ type: "section", text: { type: "mrkdwn", text: `…and ${summaries.length - shown.length} more changes` } });
  }
  // `<!date^…|fallback>` shows the time in each reader's own time zone.
  const unix = Math.floor(timestamp.getTime() / 1000);
  const when = `<!date^${unix}^{date_short_pretty} {time_secs}|${timestamp.toISOString()}>`;
  return {
    text,
    blocks: [
      { type: "header", text: { type: "plain_text", text: cut(title, 150) } },
      ...sections,
      { type: "context", elements: [{ type: "mrkdwn", text: `flagserve · ${escapeMrkdwn(environment)} · ${when}` }] },
    ],
  };
}
