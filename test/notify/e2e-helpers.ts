/** The real CLI serving a file whose notification URLs come from `${VAR}`s pointing at loopback receivers. */
import { startCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/files.js";
import { startReceiver, type Receiver } from "./receiver.js";

export const KEY = "notify-key-0123456789";
export const SECRET = "webhook-secret-for-tests";
/** Stands in for the secret part of a Slack webhook URL: it must never be logged. */
export const SLACK_PATH = "/services/T0001/B0001/SlackPathSecret";

export interface Edit {
  checkout?: "on" | "off";
  state?: "ENABLED" | "DISABLED";
  domain?: string;
  green?: string;
}

/** The environment file, written the way a user would: URLs and secret as `${VAR}`. */
export const flagFile = ({ checkout = "off", state = "ENABLED", domain = "@example.com", green = "#2da44e" }: Edit = {}) => `apiKey: ${KEY}
notifications:
  - type: slack
    url: \${SLACK_URL}
  - type: webhook
    url: \${HOOK_URL}
    secret: \${HOOK_SECRET}
segments:
  beta-testers:
    ends_with: [{ var: email }, "${domain}"]
flags:
  new-checkout:
    state: ${state}
    variants: { "on": true, "off": false }
    defaultVariant: "${checkout}"
    targeting:
      if: [{ $ref: beta-testers }, "on", null]
  banner-color:
    variants: { blue: "#1f6feb", green: "${green}" }
    defaultVariant: blue
`;

export async function serveWithReceivers(cleanups: (() => unknown)[]) {
  const slack = await startReceiver();
  const hook = await startReceiver();
  const dir = await tempDir();
  cleanups.push(
    () => slack.close(),
    () => hook.close(),
  );
  const file = await dir.write("flags/production.yaml", flagFile());
  const { cli, url } = await startCli([dir.file("flags"), "--state-dir", dir.file("state")], {
    env: { SLACK_URL: `${slack.url}${SLACK_PATH}`, HOOK_URL: `${hook.url}/hook`, HOOK_SECRET: SECRET },
  });
  cleanups.push(() => cli.stop("SIGKILL"));
  return { slack, hook, file, cli, url };
}

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type { Receiver };
