/**
 * flagd's web provider (`@openfeature/flagd-web-provider`, unchanged) in Chromium, on a page served
 * from another origin (another port on loopback), against the CLI's flagd port: Connect over
 * HTTP/1.1 through CORS (the preflights for its Content-Type, Connect-Protocol-Version and the
 * `flagd-selector` header an interceptor adds), ResolveAll and the EventStream. What is checked is
 * what the user sees: the flag values on the page, and the new one after the file is edited.
 */
import { writeFile } from "node:fs/promises";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailable as available, launchChromium, pageWithErrors, servePage, type ServedPage } from "../helpers/browser.js";
import { startCli, type CliProcess } from "../helpers/cli.js";
import { tempDir, type TempDir } from "../helpers/files.js";

const KEY = "flagd-browser-key-0123456789";
const file = (banner: string) => `apiKey: ${KEY}
flags:
  banner:
    variants: { shown: "${banner}", hidden: "" }
    defaultVariant: shown
  vip:
    variants: { "yes": true, "no": false }
    defaultVariant: "no"
    targeting: { if: [{ "==": [{ var: plan }, premium] }, "yes", null] }
`;

// The app: flagd's web provider, selecting by key with an interceptor (it has no selector
// option), and the flags' current values on screen, rendered again on every ConfigurationChanged.
const APP = `
import { OpenFeature, ProviderEvents } from "@openfeature/web-sdk";
import { FlagdWebProvider } from "@openfeature/flagd-web-provider";

const params = new URLSearchParams(location.search);
const show = (id, text) => (document.getElementById(id).textContent = text);
const selector = (next) => (request) => {
  request.header.set("flagd-selector", params.get("key"));
  return next(request);
};
try {
  const flagd = new URL(params.get("flagd"));
  await OpenFeature.setContext({ targetingKey: "browser-user", plan: "premium" });
  await OpenFeature.setProviderAndWait(new FlagdWebProvider({ host: flagd.hostname, port: Number(flagd.port), tls: false, interceptors: [selector] }));
  const client = OpenFeature.getClient();
  const render = () => {
    show("banner", client.getStringValue("banner", "(code default)"));
    show("vip", String(client.getBooleanValue("vip", false)));
  };
  client.addHandler(ProviderEvents.ConfigurationChanged, render);
  render();
  show("status", "ready");
} catch (error) {
  show("status", "failed: " + error);
}
`;

const PAGE = `<!doctype html><meta charset="utf-8"><title>flag demo</title>
<p>Banner: <output id="banner">(loading)</output></p>
<p>VIP: <output id="vip">(loading)</output></p>
<p>Status: <output id="status">starting</output></p>
<script type="module" src="/app.js"></script>`;

let dir: TempDir;
let cli: CliProcess;
let flagdUrl: string;
let pages: ServedPage;
let pageUrl: string;
let browser: Browser;

beforeAll(async () => {
  if (!available) return;
  dir = await tempDir();
  await dir.write("flags/dev.yaml", file("hello from flagd's port"));
  ({ cli } = await startCli([dir.file("flags"), "--flagd-port", "0", "--state-dir", dir.file("state")]));
  flagdUrl = `http://127.0.0.1:${/flagd port (\d+)/.exec(cli.stdout())![1]}`;

  pages = await servePage(PAGE, APP, new URL("../../", import.meta.url));
  pageUrl = pages.url;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await pages?.close();
  await cli?.stop();
});

describe.skipIf(!available)("flagd's web provider in Chromium, from another origin", () => {
  it("shows the flags' values (targeting by the page's context), and the new value after the file is edited", async () => {
    expect(new URL(pageUrl).origin).not.toBe(new URL(flagdUrl).origin);
    const { page, errors: problems } = await pageWithErrors(browser);
    await page.goto(`${pageUrl}/?flagd=${encodeURIComponent(flagdUrl)}&key=${KEY}`);

    const status = page.locator("#status");
    const banner = page.locator("#banner");
    await expect.poll(() => status.innerText(), { timeout: 15_000 }).toBe("ready");
    expect(await banner.innerText()).toBe("hello from flagd's port");
    expect(await page.locator("#vip").innerText()).toBe("true");

    await writeFile(dir.file("flags/dev.yaml"), file("edited while the page is open"));
    await expect.poll(() => banner.innerText(), { timeout: 10_000 }).toBe("edited while the page is open");
    expect(problems.filter((p) => /CORS|blocked|ERR_/i.test(p))).toEqual([]);
    await page.close();
  }, 45_000);

  it("gets no flags on a page whose key selects nothing: its stream is refused, and the provider is never ready", async () => {
    const page = await browser.newPage();
    await page.goto(`${pageUrl}/?flagd=${encodeURIComponent(flagdUrl)}&key=not-a-key`);
    // The provider retries its refused stream and never becomes ready; the page renders nothing from the server.
    const refused = async () =>
      /^flagserve_flagd_calls_total\{method="EventStream",code="UNAUTHENTICATED"\} [1-9]/m.test(
        await (await fetch(`${/^ready (\S+)$/m.exec(cli.stdout())![1]}/metrics`)).text(),
      );
    await expect.poll(refused, { timeout: 10_000 }).toBe(true);
    expect(await page.locator("#status").innerText()).toBe("starting");
    await page.close();
  }, 30_000);
});
