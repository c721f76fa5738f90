/**
 * Takes docs/dashboard.png from the real page: a server on a copy of the bundled example, the
 * page in Chromium (Debian's, through playwright-core, as test/admin/dashboard-browser.test.ts
 * runs it), with what a person sees after a few minutes of use: an override, an edit of the
 * file arriving live, the playground's results and a recorded session.
 *
 *   npm run docs:generate     (help texts, then this)
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Page } from "playwright-core";
import { createFlagServer } from "../src/index.js";

export const SCREENSHOT = fileURLToPath(new URL("../docs/dashboard.png", import.meta.url));
const EXAMPLE = fileURLToPath(new URL("../flags.example.yaml", import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ADMIN_TOKEN = "fsa_screenshot-token-0123456789abcdef";
const SESSION = "checkout-test";

/** One step of the scene; a page that changed its controls still gets its picture, with a warning. */
async function step(what: string, action: () => Promise<unknown>): Promise<void> {
  try {
    await action();
  } catch (error) {
    console.warn(`screenshot: could not ${what} (${(error as Error).message.split("\n")[0]}); taking the picture anyway`);
  }
}

async function evaluate(url: string, key: string, context: object): Promise<void> {
  const response = await fetch(`${url}/ofrep/v1/evaluate/flags/new-checkout`, {
    method: "POST",
    headers: { "X-API-Key": key, "X-Flagserve-Session": SESSION },
    body: JSON.stringify({ context }),
  });
  await response.arrayBuffer();
}

/** Writes docs/dashboard.png and returns its path. */
export async function takeScreenshot(out: string = SCREENSHOT): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "flagserve-screenshot-"));
  // A copy of the example, so that it can be edited while the page shows it.
  const example = await readFile(EXAMPLE, "utf8");
  await copyFile(EXAMPLE, join(dir, "example.yaml"));
  const server = await createFlagServer({ config: join(dir, "example.yaml"), stateDir: join(dir, "state"), adminToken: ADMIN_TOKEN });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ["--no-sandbox"] : [] });
  try {
    const page: Page = await browser.newPage({ viewport: { width: 1280, height: 1320 }, deviceScaleFactor: 1 });
    await page.goto(`${server.url.replace("127.0.0.1", "localhost")}/#token=${ADMIN_TOKEN}`);
    await page.getByRole("heading", { name: "new-checkout" }).first().waitFor();
    const key = server.keys.development!;

    await step("override a flag", () => server.overrides.set("development", "checkout-config", { variant: "streamlined" }));
    await step("edit the file", async () => {
      await writeFile(join(dir, "example.yaml"), example.replace(/(banner-color:[\s\S]*?defaultVariant: )blue/, "$1green"));
      await page
        .getByRole("region", { name: "Recent changes" })
        .getByText(/banner-color/)
        .first()
        .waitFor({ timeout: 5_000 });
    });
    await step("try a context in the playground", async () => {
      await page.getByLabel("Environment", { exact: true }).selectOption("development");
      await page.getByLabel("Context (JSON)").fill('{"targetingKey": "user-1", "email": "ada@example.com"}');
      await page.getByRole("button", { name: "Evaluate" }).click();
      await page.getByRole("list", { name: "Results" }).getByRole("listitem").first().waitFor({ timeout: 5_000 });
    });
    await step("watch a session", async () => {
      const region = page.getByRole("region", { name: "Session feed" });
      await region.getByLabel("Session id").fill(SESSION);
      await region.getByRole("button", { name: "Watch", exact: true }).click();
      await evaluate(server.url, key, { targetingKey: "u1", email: "ann@example.com" });
      await evaluate(server.url, key, { targetingKey: "u2" });
      await region.getByRole("listitem").nth(1).waitFor({ timeout: 5_000 });
    });
    await page.evaluate("window.scrollTo(0, 0)"); // as text: scripts/ are type-checked without the DOM
    await page.screenshot({ path: out });
    return out;
  } finally {
    await browser.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(`${await takeScreenshot()} written`);
