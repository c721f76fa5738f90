/**
 * The real Flipswitch web SDK in Chromium, on a page served from another origin (another port
 * on loopback), so every call goes through CORS: the preflights for its X-API-Key,
 * X-Flipswitch-*, Cache-Control headers, the OFREP calls, its event stream, and the OFREP
 * stream's EventSource. What is checked is what the user sees: the flag value on the page.
 */
import { writeFile } from "node:fs/promises";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailable as available, launchChromium, pageWithErrors, servePage, type ServedPage } from "../helpers/browser.js";
import { startCli, type CliProcess } from "../helpers/cli.js";
import { tempDir, type TempDir } from "../helpers/files.js";

const KEY = "browser-key-0123456789";
const file = (banner: string) => `apiKey: ${KEY}
flags:
  banner:
    variants: { shown: "${banner}", hidden: "" }
    defaultVariant: shown
`;

// The app: the web provider from the vendored build and the flag's current value on screen,
// re-read on every ConfigurationChanged and a few times a second, as a reactive UI would.
// (Re-reading only on the event is not enough with this SDK build and ofrep-web-provider 0.4.3:
// its default local-cache-first mode answers the SDK's refresh from localStorage and fetches the
// new values in the background, so ConfigurationChanged arrives before them and nothing follows.
// Polling is off, so the new value can only come through the event streams all the same.)
const APP = `
import { OpenFeature, ProviderEvents } from "@openfeature/web-sdk";
import { FlipswitchWebProvider } from "./flipswitch-js-sdk/web-provider.mjs";

const params = new URLSearchParams(location.search);
const show = (id, text) => (document.getElementById(id).textContent = text);
try {
  const provider = new FlipswitchWebProvider({ apiKey: params.get("key"), baseUrl: params.get("server"), enablePollingFallback: false, persistCache: false });
  await OpenFeature.setContext({ targetingKey: "browser-user" });
  await OpenFeature.setProviderAndWait(provider);
  const client = OpenFeature.getClient();
  const render = () => show("banner", client.getStringValue("banner", "(code default)"));
  client.addHandler(ProviderEvents.ConfigurationChanged, render);
  render();
  setInterval(render, 100);
  show("status", "ready");
} catch (error) {
  show("status", "failed: " + error);
}
`;

const PAGE = `<!doctype html><meta charset="utf-8"><title>flag demo</title>
<p>Banner: <output id="banner">(loading)</output></p>
<p>Status: <output id="status">starting</output></p>
<script type="module" src="/app.js"></script>`;

let dir: TempDir;
let cli: CliProcess;
let flagserveUrl: string;
let pages: ServedPage;
let pageUrl: string;
let browser: Browser;

beforeAll(async () => {
  if (!available) return;
  dir = await tempDir();
  await dir.write("flags/dev.yaml", file("hello from flagserve"));
  ({ cli, url: flagserveUrl } = await startCli([dir.file("flags"), "--state-dir", dir.file("state")]));

  pages = await servePage(PAGE, APP, new URL("../fixtures/", import.meta.url));
  pageUrl = pages.url;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await pages?.close();
  await cli?.stop();
});

describe.skipIf(!available)("the Flipswitch web SDK in Chromium, from another origin", () => {
  it("shows the flag's value, and the new value after the file is edited", async () => {
    expect(new URL(pageUrl).origin).not.toBe(new URL(flagserveUrl).origin);
    const { page, errors: problems } = await pageWithErrors(browser);
    await page.goto(`${pageUrl}/?server=${encodeURIComponent(flagserveUrl)}&key=${KEY}`);

    const status = page.locator("#status");
    const banner = page.locator("#banner");
    await expect.poll(() => status.innerText(), { timeout: 15_000 }).toBe("ready");
    expect(await banner.innerText()).toBe("hello from flagserve");

    // The SDK's own event stream is open (its fetch carries X-API-Key and X-Flipswitch-*).
    const streamsOpen = async () => /^flagserve_sse_streams [1-9]/m.test(await (await fetch(`${flagserveUrl}/metrics`)).text());
    await expect.poll(streamsOpen, { timeout: 10_000 }).toBe(true);

    await writeFile(dir.file("flags/dev.yaml"), file("edited while the page is open"));
    await expect.poll(() => banner.innerText(), { timeout: 10_000 }).toBe("edited while the page is open");

    // Requests with the browser's identification headers got through CORS.
    const metrics = await (await fetch(`${flagserveUrl}/metrics`)).text();
    expect(metrics).toMatch(/flagserve_client_requests_total\{header="x-flipswitch-runtime",value="chrome\/\d+"\} [1-9]/);
    expect(problems.filter((p) => /CORS|blocked/i.test(p))).toEqual([]);
    await page.close();
  }, 45_000);
});
