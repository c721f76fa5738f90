/**
 * A real Chromium for the tests of what a person sees (Debian's package, driven by
 * playwright-core), and pages served from an origin other than the server's.
 */
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium, type Browser, type Page } from "playwright-core";

/** Debian's chromium (.ci/run installs it); CHROMIUM_PATH points elsewhere. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const chromiumAvailable = existsSync(CHROMIUM);
if (!chromiumAvailable && process.env.CI) throw new Error(`no Chromium at ${CHROMIUM}: .ci/run installs Debian's chromium package`);

// Chromium's sandbox needs user namespaces that root in a container does not get.
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ["--no-sandbox"] : [] });

/** A new page, and the errors its console shows from now on (a CORS refusal is one). */
export async function pageWithErrors(browser: Browser): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  return { page, errors };
}

export interface ServedPage {
  url: string;
  close(): Promise<void>;
}

/**
 * `html` at every path but /app.js, which is `app` (an ES module) bundled for the browser with its
 * imports resolved from `resolveDir`; on a loopback port of its own, so another origin than the
 * server's and every call the page makes goes through CORS.
 */
export async function servePage(html: string, app: string, resolveDir: URL): Promise<ServedPage> {
  const bundle = await build({
    stdin: { contents: app, resolveDir: fileURLToPath(resolveDir), sourcefile: "app.js" },
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  const script = bundle.outputFiles[0]!.text;
  const server = createServer((req, res) => {
    const [type, body] = req.url === "/app.js" ? ["text/javascript", script] : ["text/html; charset=utf-8", html];
    res.writeHead(200, { "content-type": type }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
