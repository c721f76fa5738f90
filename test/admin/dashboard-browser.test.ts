/**
 * The dashboard in a real Chromium (Debian's, driven by playwright-core): what a user sees and
 * does — flags, overrides that a real OpenFeature client then gets, a YAML edit showing up
 * live, a failing reload's banner, the playground, save to file, a session's evaluations live.
 * Checked through text, roles and labels, not DOM internals.
 */
import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OpenFeature } from "@openfeature/server-sdk";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ADMIN_TOKEN, DEV_KEY, startAdminFixture, type AdminFixture } from "./helpers.js";
import { tempDir, type TempDir } from "../helpers/files.js";

/** Debian's chromium (.ci/run installs it); CHROMIUM_PATH points elsewhere. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) throw new Error(`no Chromium at ${CHROMIUM}: .ci/run installs Debian's chromium package`);

vi.setConfig({ testTimeout: 30_000 });

const YAML = `# development flags
apiKey: ${DEV_KEY}
segments:
  beta:
    ends_with: [{ var: email }, "@example.com"]
flags:
  new-checkout:
    variants: { on: true, off: false }
    defaultVariant: off # what everyone gets
    targeting:
      if: [{ $ref: beta }, on, null]
  banner:
    variants:
      blue: blue
      green: green
    defaultVariant: blue
  split:
    variants: { a: a, b: b }
    defaultVariant: a
    targeting:
      fractional: [[a, 50], [b, 50]]
`;

let dir: TempDir;
let fixture: AdminFixture;
let browser: Browser;
let page: Page;
let navigations = 0;
const file = () => dir.file("flags/dev.yaml");
const card = (flag: string) => page.getByRole("article", { name: flag, exact: true });

beforeAll(async () => {
  if (!available) return;
  dir = await tempDir();
  await dir.write("flags/dev.yaml", YAML);
  await dir.write("flags/prod.yaml", "flags:\n  banner:\n    variants: { blue: blue }\n    defaultVariant: blue\n");
  fixture = await startAdminFixture({}, dir);
  await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl: fixture.server.url, headers: [["X-API-Key", DEV_KEY]] }));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ["--no-sandbox"] : [] });
  page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  page.on("framenavigated", () => navigations++);
  await page.goto(`${fixture.server.url.replace("127.0.0.1", "localhost")}/#token=${ADMIN_TOKEN}`);
});

afterAll(async () => {
  await browser?.close();
  await OpenFeature.close();
  await fixture?.close();
});

describe.skipIf(!available)("the dashboard in Chromium", () => {
  it("takes the token from the fragment, clears it, and shows every environment's flags", async () => {
    await expect.poll(() => page.url()).not.toContain("token");
    await page.getByRole("heading", { name: "new-checkout" }).waitFor();
    expect(await page.getByRole("tab").allTextContents()).toEqual(["dev", "prod"]);
    expect(await page.getByRole("tab", { name: "dev" }).getAttribute("aria-selected")).toBe("true");
    const checkout = card("new-checkout");
    expect(await checkout.textContent()).toContain("Default variant: off");
    expect(await checkout.getByRole("row", { name: /^on/ }).textContent()).toContain("true");
    expect(await checkout.getByRole("listitem").first().textContent()).toBe("if segment beta → \"on\"");
    expect(await checkout.getByRole("listitem").filter({ hasText: "beta:" }).textContent()).toBe('beta: email ends with "@example.com"');
    expect(await card("split").getByRole("listitem").first().textContent()).toBe('→ split "a" 50%, "b" 50%');
    await expect.poll(() => page.getByRole("status").first().textContent()).toBe("live");
  });

  it("an override chosen on the page is what a real OpenFeature client gets; Reset returns the file's", async () => {
    const client = OpenFeature.getClient();
    expect(await client.getStringValue("banner", "x", { targetingKey: "u" })).toBe("blue");
    await card("banner").getByLabel("Override").selectOption({ label: "variant green" });
    await card("banner").getByText("overridden: variant green").waitFor();
    expect(await client.getStringValue("banner", "x", { targetingKey: "u" })).toBe("green");

    await card("banner").getByRole("button", { name: "Reset banner" }).click();
    await card("banner").getByText("overridden: variant green").waitFor({ state: "detached" });
    expect(await client.getStringValue("banner", "x", { targetingKey: "u" })).toBe("blue");

    await card("new-checkout").getByLabel("Override").selectOption({ label: "disabled" });
    await card("new-checkout").getByText("overridden: disabled").waitFor();
    // ofrep-provider 0.1.3 gives the caller's default for a DISABLED flag (see the README).
    expect(await client.getBooleanValue("new-checkout", true, { targetingKey: "u" })).toBe(true);
    expect(await client.getBooleanValue("new-checkout", false, { targetingKey: "u" })).toBe(false);
    await page.getByRole("button", { name: "Reset all overrides" }).click();
    await card("new-checkout").getByText("overridden: disabled").waitFor({ state: "detached" });
    expect(fixture.server.overrides.list()).toEqual({});
  });

  it("a YAML edit shows up without a reload, highlighted and in the feed; a broken edit shows file:line:col", async () => {
    const before = navigations;
    await writeFile(file(), YAML.replace("    defaultVariant: blue\n", "    defaultVariant: green\n"));
    await card("banner").getByText("Default variant: green").waitFor();
    await card("banner").getByText("changed", { exact: true }).waitFor();
    await page.getByRole("region", { name: "Recent changes" }).getByText("dev: flag banner updated").first().waitFor();

    // A segment's edit: the flags using it are highlighted too.
    await card("new-checkout").getByText("changed", { exact: true }).waitFor({ state: "detached" }); // earlier highlights gone
    await writeFile(file(), YAML.replace('"@example.com"', '"@example.org"'));
    await page.getByRole("region", { name: "Recent changes" }).getByText(/segment beta updated/).first().waitFor();
    await card("new-checkout").getByText("changed", { exact: true }).waitFor();
    await card("new-checkout").getByText('beta: email ends with "@example.org"').waitFor();

    await writeFile(file(), `${YAML}  broken: [\n`);
    const alert = page.getByRole("alert").filter({ hasText: "A reload failed" });
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(new RegExp(`${file().replaceAll("/", "\\/")}:\\d+:\\d+ `));
    await writeFile(file(), YAML);
    await alert.waitFor({ state: "hidden" });
    await card("banner").getByText("Default variant: blue").waitFor();
    expect(navigations).toBe(before);
  });

  it("the playground shows each flag's value, variant and reason, errors per flag", async () => {
    await page.getByLabel("Environment", { exact: true }).selectOption("dev");
    await page.getByLabel("Context (JSON)").fill('{"email": "ann@example.com"}');
    await page.getByRole("button", { name: "Evaluate" }).click();
    const results = page.getByRole("table", { name: "Results" });
    await results.waitFor();
    expect(await results.getByRole("row", { name: /^new-checkout/ }).textContent()).toBe("new-checkouttrueonTARGETING_MATCH");
    expect(await results.getByRole("row", { name: /^banner/ }).textContent()).toBe('banner"blue"blueSTATIC');
    expect(await results.getByRole("row", { name: /^split/ }).textContent()).toContain("TARGETING_KEY_MISSING");

    await page.getByLabel("Context (JSON)").fill('{"targetingKey": "user-1"');
    await page.getByRole("button", { name: "Evaluate" }).click();
    await page.getByRole("alert").filter({ hasText: "not valid JSON" }).waitFor();
  });

  it("save to file writes the override into the YAML as a one-line diff, and the page follows", async () => {
    await card("new-checkout").getByLabel("Override").selectOption({ label: "variant on" });
    await card("new-checkout").getByText("overridden: variant on").waitFor();
    await card("new-checkout").getByRole("button", { name: "Save to file new-checkout" }).click();
    await card("new-checkout").getByText("Default variant: on").waitFor();
    await card("new-checkout").getByText("overridden: variant on").waitFor({ state: "detached" });
    const after = await readFile(file(), "utf8");
    writeFileSync(dir.file("a.yaml"), YAML);
    let diff = "";
    try {
      execFileSync("git", ["diff", "--no-index", "--unified=0", dir.file("a.yaml"), file()], { encoding: "utf8" });
    } catch (error) {
      diff = (error as { stdout: string }).stdout;
    }
    expect(diff.split("\n").filter((l) => /^[-+](?![-+])/.test(l))).toEqual(["-    defaultVariant: off # what everyone gets", "+    defaultVariant: on # what everyone gets"]);
    expect(after).toBe(YAML.replace("defaultVariant: off #", "defaultVariant: on #"));
    expect(await OpenFeature.getClient().getBooleanValue("new-checkout", false, { targetingKey: "u" })).toBe(true);
    await writeFile(file(), YAML);
  });

  it("the session feed shows a chosen session's evaluations as a real client makes them", async () => {
    const id = "browser/run-1";
    OpenFeature.setProvider("session-feed", new OFREPProvider({ baseUrl: fixture.server.url, headers: [["X-API-Key", DEV_KEY], ["X-Flagserve-Session", id]] }));
    const recorded = OpenFeature.getClient("session-feed");
    expect(await recorded.getStringValue("banner", "x", { targetingKey: "early-user" })).toBe("blue");

    const region = page.getByRole("region", { name: "Session feed" });
    await region.getByLabel("Session id").fill(id);
    await region.getByRole("button", { name: "Watch", exact: true }).click();
    const items = region.getByRole("list", { name: /^Evaluations in the session/ }).getByRole("listitem");
    // What the session held before: shown at once.
    await items.filter({ hasText: "early-user" }).waitFor();
    expect(await items.first().textContent()).toMatch(/banner → "blue" \(variant blue, STATIC\)context \{"targetingKey":"early-user"\}$/);

    // Then each evaluation as the client makes it, newest first.
    expect(await recorded.getBooleanValue("new-checkout", false, { targetingKey: "live-user", email: "ann@example.com" })).toBe(true);
    await items.filter({ hasText: "live-user" }).waitFor();
    expect(await items.first().textContent()).toMatch(/new-checkout → true \(variant on, TARGETING_MATCH\)context \{"targetingKey":"live-user","email":"ann@example.com"\}$/);
    expect(await recorded.getBooleanValue("no-such-flag", false, { targetingKey: "u" })).toBe(false);
    await items.filter({ hasText: "no-such-flag" }).waitFor();
    expect(await items.first().textContent()).toContain("no-such-flag → error FLAG_NOT_FOUND");
    expect(await items.count()).toBe(3);
    await expect.poll(() => region.getByRole("status").textContent()).toBe(`Watching session ${id}: 3 evaluations.`);

    // Other sessions and plain requests stay out; the page's other live parts keep working.
    await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags/banner`, { method: "POST", headers: { "x-api-key": DEV_KEY, "x-flagserve-session": "someone-else" }, body: "{}" });
    await fixture.server.overrides.set("dev", "banner", { variant: "green" });
    await card("banner").getByText("overridden: variant green").waitFor();
    await fixture.server.overrides.clear("dev", "banner");
    await card("banner").getByText("overridden: variant green").waitFor({ state: "detached" });
    expect(await items.count()).toBe(3);

    // A test suite clears the session between tests: the feed starts over.
    expect(fixture.server.clearSession(id)).toBe(true);
    await expect.poll(() => items.count()).toBe(0);
    await expect.poll(() => region.getByRole("status").textContent()).toBe(`Watching session ${id}: 0 evaluations.`);
    expect(await recorded.getStringValue("banner", "x", { targetingKey: "after-clear" })).toBe("blue");
    await items.filter({ hasText: "after-clear" }).waitFor();

    await region.getByRole("button", { name: "Stop watching" }).click();
    await expect.poll(() => region.getByRole("status").textContent()).toBe("Not watching a session.");
    expect(await items.count()).toBe(0);

    // An id no request could carry: the reason, and the rest of the page stays live.
    await region.getByLabel("Session id").fill("two words");
    await region.getByRole("button", { name: "Watch", exact: true }).click();
    await expect.poll(() => region.getByRole("status").textContent()).toMatch(/^a session id is 1 to 128 visible ASCII characters/);
    await expect.poll(() => page.getByRole("status").first().textContent()).toBe("live");
  });

  it("is usable by keyboard and readable at 360 px", async () => {
    await page.getByRole("tab", { name: "dev" }).focus();
    await page.keyboard.press("ArrowRight");
    expect(await page.getByRole("tab", { name: "prod" }).getAttribute("aria-selected")).toBe("true");
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("prod");
    await page.keyboard.press("ArrowLeft");
    await page.getByLabel("Search flags").fill("checkout");
    expect(await page.getByRole("article").count()).toBe(1);
    await page.getByLabel("Search flags").fill("");
    await page.setViewportSize({ width: 360, height: 800 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  });

  it("without a token, or with a wrong one, asks for it", async () => {
    const other = await browser.newPage();
    try {
      await other.goto(`${fixture.server.url}/`);
      await other.getByLabel("Admin token").waitFor();
      await other.goto(`${fixture.server.url}/#token=wrong`);
      await other.reload();
      await other.getByText("The admin token was not accepted").waitFor();
      await other.getByLabel("Admin token").fill(ADMIN_TOKEN);
      await other.getByRole("button", { name: "Open dashboard" }).click();
      await other.getByRole("heading", { name: "new-checkout" }).waitFor();
    } finally {
      await other.close();
    }
  });
});
