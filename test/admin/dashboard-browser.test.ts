/**
 * The dashboard in a real Chromium (Debian's, driven by playwright-core): what a user sees and
 * does — flags, overrides that a real OpenFeature client then gets, a YAML edit showing up
 * live, a failing reload's banner, the playground, save to file, a session's evaluations live.
 * Checked through text, roles and labels, not DOM internals.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OpenFeature } from "@openfeature/server-sdk";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ADMIN_TOKEN, DEV_KEY, startAdminFixture, type AdminFixture } from "./helpers.js";
import { chromiumAvailable as available, launchChromium } from "../helpers/browser.js";
import { tempDir, type TempDir } from "../helpers/files.js";

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

/** Enough flags for the compact list to be the default view. */
const MANY_FLAGS = `apiKey: wide-key-0123456789\nflags:\n${Array.from(
  { length: 20 },
  (_, i) =>
    `  switch-${String(i).padStart(2, "0")}:\n    variants: { "yes": true, "no": false }\n    defaultVariant: "${i % 2 ? "yes" : "no"}"\n`,
).join(
  "",
)}  colour:\n    variants: { plain: streamlined, fancy: ornate }\n    defaultVariant: plain\n  beta-gate:\n    variants: { "yes": true, "no": false }\n    defaultVariant: "no"\n    targeting: { if: [{ var: beta }, "yes", null] }\n`;

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
  await dir.write("flags/wide.yaml", MANY_FLAGS);
  fixture = await startAdminFixture({}, dir);
  await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl: fixture.server.url, headers: [["X-API-Key", DEV_KEY]] }));
  browser = await launchChromium();
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
    expect(await page.getByRole("tab").allTextContents()).toEqual(["dev", "prod", "wide"]);
    expect(await page.getByRole("tab", { name: "dev" }).getAttribute("aria-selected")).toBe("true");
    const checkout = card("new-checkout");
    // What it serves and why, once: the default variant, which targeting may replace.
    expect(await checkout.locator(".served").textContent()).toBe("Serves off false unless targeting matches file");
    expect(await checkout.textContent()).not.toContain("Default variant");
    expect(await checkout.getByRole("row", { name: /^on/ }).textContent()).toContain("true");
    expect(await checkout.getByRole("listitem").first().textContent()).toBe('if segment beta → "on"');
    expect(await checkout.getByRole("listitem").nth(1).textContent()).toBe("else → the default variant (off)");
    expect(await checkout.getByRole("listitem").filter({ hasText: "beta:" }).textContent()).toBe('beta: email ends with "@example.com"');
    expect(await card("split").getByRole("listitem").first().textContent()).toBe('→ split "a" 50%, "b" 50%');
    await expect.poll(() => page.getByRole("status").first().textContent()).toBe("live");
  });

  it("an override chosen on the page is what a real OpenFeature client gets; Reset returns the file's", async () => {
    const client = OpenFeature.getClient();
    expect(await client.getStringValue("banner", "x", { targetingKey: "u" })).toBe("blue");
    await card("banner").getByLabel("Override").selectOption({ label: "variant green" });
    await card("banner").getByText("overridden: variant green").waitFor();
    expect(await card("banner").locator(".served").textContent()).toBe('Serves green "green" to everyone override');
    expect(await client.getStringValue("banner", "x", { targetingKey: "u" })).toBe("green");

    await card("banner").getByRole("button", { name: "Reset banner" }).click();
    await card("banner").getByText("overridden: variant green").waitFor({ state: "detached" });
    expect(await client.getStringValue("banner", "x", { targetingKey: "u" })).toBe("blue");

    await card("new-checkout").getByLabel("Override").selectOption({ label: "disabled" });
    await card("new-checkout").getByText("overridden: disabled").waitFor();
    expect(await card("new-checkout").locator(".served").textContent()).toBe("Disabled: callers get their own default override");
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
    await card("banner").getByText("Serves green").waitFor();
    await card("banner").getByText("changed", { exact: true }).waitFor();
    await page.getByRole("region", { name: "Recent changes" }).getByText("dev: flag banner updated").first().waitFor();

    // A segment's edit: the flags using it are highlighted too.
    await card("new-checkout").getByText("changed", { exact: true }).waitFor({ state: "detached" }); // earlier highlights gone
    await writeFile(file(), YAML.replace('"@example.com"', '"@example.org"'));
    await page
      .getByRole("region", { name: "Recent changes" })
      .getByText(/segment beta updated/)
      .first()
      .waitFor();
    await card("new-checkout").getByText("changed", { exact: true }).waitFor();
    await card("new-checkout").getByText('beta: email ends with "@example.org"').waitFor();

    await writeFile(file(), `${YAML}  broken: [\n`);
    const alert = page.getByRole("alert").filter({ hasText: "A reload failed" });
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(new RegExp(`${file().replaceAll("/", "\\/")}:\\d+:\\d+ `));
    await writeFile(file(), YAML);
    await alert.waitFor({ state: "hidden" });
    await card("banner").getByText("Serves blue").waitFor();
    expect(navigations).toBe(before);
  });

  it("the playground is in reach at once and shows each flag's answer, which rule matched, errors per flag", async () => {
    // Beside the flags, not below them: in view without scrolling.
    await page.evaluate(() => window.scrollTo(0, 0));
    const viewport = page.viewportSize()!;
    for (const control of [page.getByLabel("Context (JSON)"), page.getByRole("button", { name: "Evaluate" })]) {
      const box = (await control.boundingBox())!;
      expect(box.y + box.height).toBeLessThanOrEqual(viewport.height);
    }

    await page.getByLabel("Environment", { exact: true }).selectOption("dev");
    await page.getByLabel("Context (JSON)").fill('{"email": "ann@example.com"}');
    await page.getByRole("button", { name: "Evaluate" }).click();
    const results = page.getByRole("list", { name: "Results" });
    await results.waitFor();
    const result = (flag: string) => results.locator(`li[data-flag="${flag}"]`);
    expect(await result("new-checkout").textContent()).toBe(
      'new-checkout → true (variant on, TARGETING_MATCH)Matched: if segment beta → "on"',
    );
    expect(await result("banner").textContent()).toBe('banner → "blue" (variant blue, STATIC)Matched: no targeting');
    expect(await result("split").textContent()).toContain("error TARGETING_KEY_MISSING");
    // Which branch: the else of the if (null: the default), and a split's bucket with its share.
    await page.getByLabel("Context (JSON)").fill('{"targetingKey": "user-1", "email": "bob@example.org"}');
    await page.getByRole("button", { name: "Evaluate" }).click();
    await expect
      .poll(() => result("new-checkout").textContent())
      .toBe("new-checkout → false (variant off, DEFAULT)Matched: else → the default variant (off)");
    expect(await result("split").textContent()).toMatch(/^split → "(a|b)" \(variant (a|b), SPLIT\)Matched: split → "\1" \(50%\)$/);
    await page.evaluate(() => window.scrollTo(0, 0));
    const shown = (await result("new-checkout").boundingBox())!;
    expect(shown.y + shown.height).toBeLessThanOrEqual(viewport.height);

    // Reasons and values read whole, never broken inside a word.
    const wrapped = await results.locator(".reason, code").evaluateAll((cells) =>
      cells
        .filter((cell) => {
          if (/\s/.test(cell.textContent!)) return false; // text of several words may wrap between them
          const range = document.createRange();
          range.selectNodeContents(cell.firstChild!);
          return range.getClientRects().length > 1;
        })
        .map((cell) => cell.textContent),
    );
    expect(wrapped).toEqual([]);

    // An overridden flag says so.
    await fixture.server.overrides.set("dev", "banner", { variant: "green" });
    await card("banner").getByText("overridden: variant green").waitFor();
    await page.getByRole("button", { name: "Evaluate" }).click();
    await expect.poll(() => result("banner").textContent()).toBe('banner → "green" (variant green, STATIC) overrideMatched: the override');
    await fixture.server.overrides.clear("dev", "banner");

    // After a JSON error the old results are gone: they were not this context's.
    await page.getByLabel("Context (JSON)").fill('{"targetingKey": "user-1"');
    await page.getByRole("button", { name: "Evaluate" }).click();
    await page.getByRole("alert").filter({ hasText: "not valid JSON" }).waitFor();
    expect(await results.isHidden()).toBe(true);
  });

  it("many flags show as a compact list: what each serves, a switch for on/off flags, the card on demand", async () => {
    await page.getByRole("tab", { name: "wide" }).click();
    const list = page.getByRole("table", { name: "Flags of wide" });
    await list.waitFor();
    expect(await page.getByRole("button", { name: "List" }).getAttribute("aria-pressed")).toBe("true");
    expect(await list.getByRole("row").count()).toBe(23); // the head and 22 flags
    expect(
      await list
        .getByRole("row", { name: /switch-01/ })
        .locator(".served")
        .textContent(),
    ).toBe("yes true file");
    // A long value wraps between words, never inside one.
    expect(
      await list
        .getByRole("row", { name: /colour/ })
        .locator("code")
        .textContent(),
    ).toBe('"streamlined"');

    // A flag its targeting decides has no switch (neither on nor off for everyone): it says so.
    const gate = list.locator('tr[data-flag="beta-gate"]');
    expect(await gate.locator("td").last().textContent()).toBe("by targeting");
    expect(await gate.locator("input").count()).toBe(0);
    // Every control on the page has an accessible name, and none is half-checked (a switch is on or off).
    const cdp = await page.context().newCDPSession(page);
    const { nodes } = (await cdp.send("Accessibility.getFullAXTree")) as {
      nodes: {
        ignored: boolean;
        role?: { value: string };
        name?: { value: string };
        properties?: { name: string; value: { value: unknown } }[];
      }[];
    };
    const roles = ["checkbox", "switch", "textbox", "searchbox", "combobox", "listbox", "radio", "slider", "spinbutton"];
    const controls = nodes.filter((n) => !n.ignored && roles.includes(n.role?.value ?? ""));
    expect(controls.filter((n) => n.role!.value === "switch").length).toBe(20);
    expect(controls.filter((n) => !n.name?.value?.trim()).map((n) => n.role!.value)).toEqual([]);
    const mixed = controls.filter((n) => n.properties?.some((p) => p.name === "checked" && p.value.value === "mixed"));
    expect(mixed.map((n) => n.name?.value)).toEqual([]);
    await cdp.detach();

    const wide = new OFREPProvider({ baseUrl: fixture.server.url, headers: [["X-API-Key", "wide-key-0123456789"]] });
    OpenFeature.setProvider("wide", wide);
    const client = OpenFeature.getClient("wide");
    const toggle = list.getByRole("switch", { name: "switch-00 on for everyone" });
    expect(await toggle.isChecked()).toBe(false);
    await toggle.click();
    const row = list.locator('tr[data-flag="switch-00"]');
    await row.getByText("override", { exact: true }).waitFor();
    expect(await client.getBooleanValue("switch-00", false, { targetingKey: "u" })).toBe(true);
    expect(fixture.server.overrides.list()).toEqual({ wide: { "switch-00": { variant: "yes" } } });

    // The card on demand, with the override's controls.
    await list.getByRole("button", { name: "switch-00", exact: true }).click();
    await card("switch-00").getByText("overridden: variant yes").waitFor();
    await card("switch-00").getByRole("button", { name: "Reset switch-00" }).click();
    await row.getByText("file", { exact: true }).waitFor();
    expect(await client.getBooleanValue("switch-00", true, { targetingKey: "u" })).toBe(false);

    await page.getByLabel("Search flags").fill("switch-1");
    await expect.poll(() => list.getByRole("row").count()).toBe(11);
    await page.getByLabel("Search flags").fill("");
    await page.getByRole("button", { name: "Cards" }).click();
    await expect.poll(() => page.getByRole("article").count()).toBe(22);
    await page.getByRole("tab", { name: "dev" }).click(); // in cards, the view chosen last
  });

  it("save to file writes the override into the YAML as a one-line diff, and the page follows", async () => {
    await card("new-checkout").getByLabel("Override").selectOption({ label: "variant on" });
    await card("new-checkout").getByText("overridden: variant on").waitFor();
    await card("new-checkout").getByRole("button", { name: "Save to file new-checkout" }).click();
    await card("new-checkout").getByText("Serves on").waitFor();
    await card("new-checkout").getByText("overridden: variant on").waitFor({ state: "detached" });
    const after = await readFile(file(), "utf8");
    writeFileSync(dir.file("a.yaml"), YAML);
    let diff = "";
    try {
      execFileSync("git", ["diff", "--no-index", "--unified=0", dir.file("a.yaml"), file()], { encoding: "utf8" });
    } catch (error) {
      diff = (error as { stdout: string }).stdout;
    }
    expect(diff.split("\n").filter((l) => /^[-+](?![-+])/.test(l))).toEqual([
      "-    defaultVariant: off # what everyone gets",
      "+    defaultVariant: on # what everyone gets",
    ]);
    expect(after).toBe(YAML.replace("defaultVariant: off #", "defaultVariant: on #"));
    expect(await OpenFeature.getClient().getBooleanValue("new-checkout", false, { targetingKey: "u" })).toBe(true);
    await writeFile(file(), YAML);
  });

  it("the session feed shows a chosen session's evaluations as a real client makes them", async () => {
    const id = "browser/run-1";
    OpenFeature.setProvider(
      "session-feed",
      new OFREPProvider({
        baseUrl: fixture.server.url,
        headers: [
          ["X-API-Key", DEV_KEY],
          ["X-Flagserve-Session", id],
        ],
      }),
    );
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
    expect(await items.first().textContent()).toMatch(
      /new-checkout → true \(variant on, TARGETING_MATCH\)context \{"targetingKey":"live-user","email":"ann@example.com"\}$/,
    );
    expect(await recorded.getBooleanValue("no-such-flag", false, { targetingKey: "u" })).toBe(false);
    await items.filter({ hasText: "no-such-flag" }).waitFor();
    expect(await items.first().textContent()).toContain("no-such-flag → error FLAG_NOT_FOUND");
    expect(await items.count()).toBe(3);
    await expect.poll(() => region.getByRole("status").textContent()).toBe(`Watching session ${id}: 3 evaluations.`);

    // Other sessions and plain requests stay out; the page's other live parts keep working.
    await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags/banner`, {
      method: "POST",
      headers: { "x-api-key": DEV_KEY, "x-flagserve-session": "someone-else" },
      body: "{}",
    });
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

  it("says so when no environment is served, with nothing to reset", async () => {
    const emptyDir = await tempDir();
    await emptyDir.write("flags/notes.txt", "not a flag file\n");
    const empty = await startAdminFixture({}, emptyDir);
    const other = await browser.newPage();
    try {
      await other.goto(`${empty.server.url.replace("127.0.0.1", "localhost")}/#token=${ADMIN_TOKEN}`);
      await other.getByText("No environment is being served.").waitFor();
      expect(await other.getByText(/add one \(for example flags\/development\.yaml\)/).count()).toBe(1);
      expect(await other.getByRole("button", { name: "Reset all overrides" }).isDisabled()).toBe(true);
    } finally {
      await other.close();
      await empty.close();
    }
  });

  it("without a token, or with a wrong one, asks for it", async () => {
    const other = await browser.newPage();
    try {
      await other.goto(`${fixture.server.url}/`);
      await other.getByLabel("Admin token").waitFor();
      expect(await other.locator("#login-message").textContent()).toContain(
        "admin-token in the state directory, which npx flagserve keys dir prints",
      );
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
