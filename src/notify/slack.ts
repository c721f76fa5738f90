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
  { type: "header"; text: SlackText } | { type: "section"; text: SlackText } | { type: "context"; elements: SlackText[] };

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

/** A key or detail longer than these is cut before escaping, so a cut never splits an entity or a code span. */
const MAX_KEY = 200;
const MAX_DETAIL = 300;
const MAX_SECTION_TEXT = 3000;

/**
 * "Flag `new-checkout` *updated*": the key in code style so odd characters stay readable. A
 * backtick inside the key would end the code span early, so it becomes a quote.
 */
function heading(summary: ChangeSummary): string {
  if (summary.key === null) return `API key *${summary.change}*`;
  const kind = summary.kind === "flag" ? "Flag" : "Segment";
  return `${kind} \`${escapeMrkdwn(cut(summary.key, MAX_KEY).replaceAll("\u0060", "'"))}\` *${summary.change}*`;
}

/** The heading and as many whole detail lines as fit in Slack's section text; the rest counted. */
function section(summary: ChangeSummary): SlackBlock {
  const details = summary.details.map((d) => `• ${escapeMrkdwn(cut(d, MAX_DETAIL))}`);
  const lines = [heading(summary)];
  let length = lines[0]!.length;
  for (const [i, line] of details.entries()) {
    const rest = details.length - i;
    // Room for this line and, if more follow, the "…and N more" line after it.
    const tail = rest > 1 ? `\n• …and ${rest - 1} more`.length : 0;
    if (i === MAX_DETAILS || length + 1 + line.length + tail > MAX_SECTION_TEXT) {
      lines.push(`• …and ${rest} more`);
      break;
    }
    lines.push(line);
    length += 1 + line.length;
  }
  return { type: "section", text: { type: "mrkdwn", text: lines.join("\n") } };
}

/** "flag new-checkout updated: defaultVariant: off -> on; targeting changed". */
const textLine = (s: ChangeSummary): string =>
  `• ${escapeMrkdwn(cut(`${s.subject} ${s.change}${s.details.length ? `: ${s.details.join("; ")}` : ""}`, MAX_DETAIL))}`;

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
