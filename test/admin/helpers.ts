/** A real server on real files for the admin tests, and a raw HTTP client (any Host header). */
import { request } from "node:http";
import { createFlagServer, type FlagServer, type FlagServerOptions } from "../../src/index.js";
import { tempDir, type TempDir } from "../helpers/files.js";

export const DEV_KEY = "dev-key-0123456789";
export const PROD_KEY = "prod-key-0123456789";
export const ADMIN_TOKEN = "admin-token-for-tests-0123456789";

export const DEV_YAML = `# development flags
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
    state: ENABLED
    variants:
      blue: blue
      green: green
    defaultVariant: blue
`;

export const PROD_YAML = `apiKey: ${PROD_KEY}
flags:
  banner:
    variants: { blue: blue, green: green }
    defaultVariant: green
`;

export interface AdminFixture {
  dir: TempDir;
  server: FlagServer;
  /** fetch() on the server with the admin token (unless headers say otherwise). */
  admin(path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
  close(): Promise<void>;
}

export async function startAdminFixture(options: Partial<FlagServerOptions> = {}, dir?: TempDir): Promise<AdminFixture> {
  const files = dir ?? (await tempDir());
  if (!dir) {
    await files.write("flags/dev.yaml", DEV_YAML);
    await files.write("flags/prod.yaml", PROD_YAML);
  }
  const server = await createFlagServer({
    config: files.file("flags"),
    adminToken: ADMIN_TOKEN,
    stateDir: files.file("state"),
    ...options,
  });
  return {
    dir: files,
    server,
    admin: (path, init = {}) =>
      fetch(`${server.url}/api/v1/admin${path}`, {
        method: init.method ?? "GET",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...init.headers },
        body: init.body === undefined ? undefined : typeof init.body === "string" ? init.body : JSON.stringify(init.body),
      }),
    async close() {
      await server.close();
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http, so the Host header is exactly what the test says (DNS rebinding). */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const { method = "GET", headers, localAddress } = options;
    const req = request(url, { method, headers, localAddress }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

export const corsHeaders = (headers: Record<string, unknown>): string[] =>
  Object.keys(headers).filter((h) => h.startsWith("access-control-"));
