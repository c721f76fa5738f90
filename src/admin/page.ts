/**
 * The dashboard page: static files shipped in the package (`ui/`), read once, served with a
 * strict Content-Security-Policy (nothing but this server, no inline script) and no caching
 * surprises. The page itself holds no data; everything it shows comes from the admin API.
 */
import { readFileSync } from "node:fs";
import type { H3 } from "h3";
import { PAGE_ASSETS_PREFIX } from "./guard.js";

export const UI_DIR = new URL("../../ui/", import.meta.url);

const ASSETS: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
};

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};

export function registerPage(app: H3): void {
  const files = new Map<string, Buffer>();
  for (const name of Object.keys(ASSETS)) files.set(name, readFileSync(new URL(name, UI_DIR)));
  const serve = (name: string) => () =>
    new Response(new Uint8Array(files.get(name)!), { headers: { "content-type": ASSETS[name]!, ...SECURITY_HEADERS } });
  app.get("/", serve("index.html"));
  for (const name of ["app.js", "app.css"]) app.get(`${PAGE_ASSETS_PREFIX}${name}`, serve(name));
}
