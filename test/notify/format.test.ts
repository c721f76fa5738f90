/** The exact bytes each receiver gets: Slack message, webhook body, signature, events filter. */
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { buildRequest } from "../../src/notify/request.js";
import { slackMessage } from "../../src/notify/slack.js";
import type { ChangeSummary } from "../../src/notify/summary.js";
import { sign, webhookBody } from "../../src/notify/webhook.js";

const at = new Date("2025-03-04T05:06:07.890Z");

const summaries: ChangeSummary[] = [
  {
    event: "flag-updated",
    kind: "flag",
    key: "new-checkout",
    change: "updated",
    subject: "flag new-checkout",
    details: ["defaultVariant: off -> on", "targeting changed"],
  },
  { event: "segment-created", kind: "segment", key: "beta", change: "created", subject: "segment beta", details: [] },
  { event: "api-key-rotated", kind: "api-key", key: null, change: "rotated", subject: "API key", details: [] },
];

describe("slackMessage", () => {
  it("builds text plus header, one section per change and a context line", () => {
    expect(slackMessage("production", summaries, at)).toEqual({
      text: [
        "flagserve: 3 changes in production",
        "• flag new-checkout updated: defaultVariant: off -&gt; on; targeting changed",
        "• segment beta created",
        "• API key rotated",
      ].join("\n"),
      blocks: [
        { type: "header", text: { type: "plain_text", text: "production: 3 changes" } },
        {
          type: "section",
          text: { type: "mrkdwn", text: "Flag `new-checkout` *updated*\n• defaultVariant: off -&gt; on\n• targeting changed" },
        },
        { type: "section", text: { type: "mrkdwn", text: "Segment `beta` *created*" } },
        { type: "section", text: { type: "mrkdwn", text: "API key *rotated*" } },
        {
          type: "context",
          elements: [
            {
              type: "mrkdwn",
              text: "flagserve · production · <!date^1741064767^{date_short_pretty} {time_secs}|2025-03-04T05:06:07.890Z>",
            },
          ],
        },
      ],
    });
  });

  it("escapes Slack markup in keys and details and stays within Slack's block limits", () => {
    const odd: ChangeSummary = {
      event: "flag-updated",
      kind: "flag",
      key: "a<b>&`c",
      change: "updated",
      subject: "flag a<b>&`c",
      details: ['variant x: "<i>" -> "&"'],
    };
    const message = slackMessage("dev", [odd], at);
    expect(message.blocks[1]).toEqual({
      type: "section",
      text: { type: "mrkdwn", text: 'Flag `a&lt;b&gt;&amp;\'c` *updated*\n• variant x: "&lt;i&gt;" -&gt; "&amp;"' },
    });

    const many = Array.from({ length: 120 }, (_, i) => ({ ...summaries[1]!, key: `s${i}`, subject: `segment s${i}` }));
    const big = slackMessage("dev", many, at);
    expect(big.blocks.length).toBeLessThanOrEqual(50);
    expect(big.blocks.at(-2)).toEqual({ type: "section", text: { type: "mrkdwn", text: "…and 81 more changes" } });
    expect(big.text.split("\n")).toHaveLength(22);
    expect(big.text.endsWith("• …and 100 more")).toBe(true);
    expect(slackMessage("dev", [summaries[2]!], at).blocks[0]).toEqual({
      type: "header",
      text: { type: "plain_text", text: "dev: 1 change" },
    });
  });

  it("cuts a long key or detail before escaping, so no code span or entity is left open", () => {
    const key = "&`".repeat(2000);
    const details = Array.from({ length: 12 }, (_, i) => `${i}${"<".repeat(1000)}`);
    const long: ChangeSummary = { event: "flag-updated", kind: "flag", key, change: "updated", subject: `flag ${key}`, details };
    const message = slackMessage("dev", [long], at);
    const block = message.blocks[1]!;
    const text = block.type === "section" ? block.text.text : "";
    expect(text.length).toBeLessThanOrEqual(3000);
    const [head, ...lines] = text.split("\n");
    // The key's code span opens and closes on the heading line; every entity is whole.
    expect(head!.match(/\u0060/g)).toHaveLength(2);
    expect(head!.endsWith("\u0060 *updated*")).toBe(true);
    const brokenEntity = /&(?!amp;|lt;|gt;)/;
    for (const t of [text, message.text]) expect(t).not.toMatch(brokenEntity);
    // Whole detail lines only, then the count of the rest.
    expect(lines.at(-1)).toMatch(/^• …and \d+ more$/);
    for (const line of lines.slice(0, -1)) expect(line).toMatch(/^• \d+(&lt;)+…$/);
    expect(lines.length - 1 + Number(/\d+/.exec(lines.at(-1)!)![0])).toBe(12);
  });
});

describe("webhookBody and sign", () => {
  it("lists each change with type, key, change and details", () => {
    expect(webhookBody("production", summaries, at)).toEqual({
      environment: "production",
      timestamp: "2025-03-04T05:06:07.890Z",
      changes: [
        { type: "flag", key: "new-checkout", change: "updated", details: ["defaultVariant: off -> on", "targeting changed"] },
        { type: "segment", key: "beta", change: "created", details: [] },
        { type: "api-key", key: null, change: "rotated", details: [] },
      ],
    });
  });

  it("signs as sha256=<hex HMAC-SHA256 of the raw body>", () => {
    // Known answer (RFC 4231 test case 2).
    expect(sign("Jefe", "what do ya want for nothing?")).toBe("sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    expect(sign("k", Buffer.from("é"))).toBe(sign("k", "é"));
  });
});

describe("buildRequest", () => {
  it("signs the exact webhook bytes and sends a delivery id", () => {
    const request = buildRequest(
      { type: "webhook", url: "http://127.0.0.1:9/hook", secret: "s3cret" },
      "production",
      summaries,
      at,
      "id-1",
    )!;
    expect(request.url).toBe("http://127.0.0.1:9/hook");
    expect(request.body).toBe(JSON.stringify(webhookBody("production", summaries, at)));
    expect(request.headers).toEqual({
      "content-type": "application/json",
      "user-agent": "flagserve",
      "X-Flagserve-Delivery": "id-1",
      "X-Flagserve-Signature": `sha256=${createHmac("sha256", "s3cret").update(request.body).digest("hex")}`,
    });
  });

  it("leaves the signature out without a secret, and sends Slack the Slack message", () => {
    expect(buildRequest({ type: "webhook", url: "http://x/" }, "dev", summaries, at, "id")!.headers).not.toHaveProperty(
      "X-Flagserve-Signature",
    );
    const slack = buildRequest(
      { type: "slack", url: "https://hooks.slack.com/services/T/B/X", secret: "ignored" },
      "dev",
      summaries,
      at,
      "id",
    )!;
    expect(JSON.parse(slack.body)).toEqual(slackMessage("dev", summaries, at));
    expect(slack.headers).toEqual({ "content-type": "application/json", "user-agent": "flagserve" });
  });

  it("applies the events filter, and sends nothing when it leaves nothing", () => {
    const only = buildRequest(
      { type: "webhook", url: "http://x/", events: ["segment-created", "api-key-rotated"] },
      "dev",
      summaries,
      at,
      "id",
    )!;
    expect(JSON.parse(only.body).changes.map((c: { type: string }) => c.type)).toEqual(["segment", "api-key"]);
    expect(buildRequest({ type: "slack", url: "http://x/", events: ["flag-deleted"] }, "dev", summaries, at, "id")).toBeUndefined();
  });
});
