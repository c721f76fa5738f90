/**
 * End to end: the real CLI, real files, real loopback receivers. Exact Slack and webhook
 * payloads for an edit, a correct HMAC over the raw bytes, and a retry after a 500.
 */
import { createHmac } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { SECRET, SLACK_PATH, flagFile, pause, serveWithReceivers } from "./e2e-helpers.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** One edit that touches a variant value, state and defaultVariant, and a segment. */
const EDIT = { checkout: "on", state: "DISABLED", domain: "@example.org", green: "#00ff00" } as const;

const EXPECTED_CHANGES = [
  { type: "flag", key: "banner-color", change: "updated", details: ['variant green: "#2da44e" -> "#00ff00"'] },
  { type: "flag", key: "new-checkout", change: "updated", details: ["state: ENABLED -> DISABLED", "defaultVariant: off -> on"] },
  { type: "segment", key: "beta-testers", change: "updated", details: ["rule changed"] },
];

describe("notifications from the CLI", () => {
  it("posts the exact Slack message and a signed webhook body for an edit", async () => {
    const { slack, hook, file, cli } = await serveWithReceivers(cleanups);
    const edited = Date.now();
    await writeFile(file, flagFile(EDIT));
    const [[got], [sent]] = await Promise.all([hook.waitFor(1), slack.waitFor(1)]);

    // Webhook: exact body, and the signature recomputed from the bytes as received.
    expect(got!.path).toBe("/hook");
    expect(got!.headers["content-type"]).toBe("application/json");
    const body = got!.json();
    const timestamp: string = body.timestamp;
    expect(Date.parse(timestamp)).toBeGreaterThanOrEqual(edited);
    expect(body).toEqual({ environment: "production", timestamp, changes: EXPECTED_CHANGES });
    const expectedSignature = `sha256=${createHmac("sha256", SECRET).update(got!.raw).digest("hex")}`;
    expect(got!.headers["x-flagserve-signature"]).toBe(expectedSignature);
    expect(got!.headers["x-flagserve-delivery"]).toMatch(/^[0-9a-f-]{36}$/);

    // Slack: the exact incoming-webhook message, composed at the same instant.
    expect(sent!.path).toBe(SLACK_PATH);
    expect(sent!.headers).not.toHaveProperty("x-flagserve-signature");
    const unix = Math.floor(Date.parse(timestamp) / 1000);
    expect(sent!.json()).toEqual({
      text: [
        "flagserve: 3 changes in production",
        '• flag banner-color updated: variant green: "#2da44e" -&gt; "#00ff00"',
        "• flag new-checkout updated: state: ENABLED -&gt; DISABLED; defaultVariant: off -&gt; on",
        "• segment beta-testers updated: rule changed",
      ].join("\n"),
      blocks: [
        { type: "header", text: { type: "plain_text", text: "production: 3 changes" } },
        { type: "section", text: { type: "mrkdwn", text: 'Flag `banner-color` *updated*\n• variant green: "#2da44e" -&gt; "#00ff00"' } },
        {
          type: "section",
          text: { type: "mrkdwn", text: "Flag `new-checkout` *updated*\n• state: ENABLED -&gt; DISABLED\n• defaultVariant: off -&gt; on" },
        },
        { type: "section", text: { type: "mrkdwn", text: "Segment `beta-testers` *updated*\n• rule changed" } },
        {
          type: "context",
          elements: [{ type: "mrkdwn", text: `flagserve · production · <!date^${unix}^{date_short_pretty} {time_secs}|${timestamp}>` }],
        },
      ],
    });

    await cli.waitFor(/production: slack notification to http:\/\/127\.0\.0\.1:\d+ sent/, "stderr");
    await cli.waitFor(/production: webhook notification to http:\/\/127\.0\.0\.1:\d+ sent/, "stderr");
    expect(cli.stderr() + cli.stdout()).not.toContain(SLACK_PATH);
    expect(cli.stderr() + cli.stdout()).not.toContain(SECRET);
    await pause(100);
    expect([slack.received.length, hook.received.length]).toEqual([1, 1]);
  });

  it("retries after a 500: two requests with the same bytes, one message", async () => {
    const { slack, hook, file, cli } = await serveWithReceivers(cleanups);
    slack.replies.push({ status: 500, body: "internal_error" });
    hook.replies.push({ status: 500 });
    await writeFile(file, flagFile({ checkout: "on" }));
    const [slackTries, hookTries] = await Promise.all([slack.waitFor(2), hook.waitFor(2)]);
    expect(slackTries[1]!.raw.equals(slackTries[0]!.raw)).toBe(true);
    expect(hookTries[1]!.raw.equals(hookTries[0]!.raw)).toBe(true);
    expect(hookTries[1]!.headers["x-flagserve-delivery"]).toBe(hookTries[0]!.headers["x-flagserve-delivery"]);
    expect(hookTries[1]!.headers["x-flagserve-signature"]).toBe(hookTries[0]!.headers["x-flagserve-signature"]);
    expect(hookTries[0]!.json().changes).toEqual([
      { type: "flag", key: "new-checkout", change: "updated", details: ["defaultVariant: off -> on"] },
    ]);
    expect(slackTries[1]!.at - slackTries[0]!.at).toBeGreaterThanOrEqual(450);
    await cli.waitFor(
      /production: slack notification to \S+ failed: HTTP 500 internal_error \(attempt 1 of 3, retrying in 500 ms\)/,
      "stderr",
    );
    await cli.waitFor(/production: slack notification to \S+ sent \(attempt 2\)/, "stderr");
    await pause(100);
    expect([slack.received.length, hook.received.length]).toEqual([2, 2]);
  });
});
