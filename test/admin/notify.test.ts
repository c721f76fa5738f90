/** An override notifies the environment's webhook like the equivalent file edit would. */
import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { serveWithReceivers } from "../notify/e2e-helpers.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("overrides and notifications", () => {
  it("setting and clearing an override each send one webhook message naming the flag and what changed", async () => {
    const { hook, url, file } = await serveWithReceivers(cleanups);
    const token = (await readFile(file.replace(/flags\/production\.yaml$/, "state/admin-token"), "utf8")).trim();
    const put = await fetch(`${url}/api/v1/admin/environments/production/overrides/new-checkout`, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}` },
      body: '{"variant":"on"}',
    });
    expect(put.status).toBe(200);
    const [set] = await hook.waitFor(1);
    expect(set!.json()).toMatchObject({ environment: "production", changes: [{ type: "flag", key: "new-checkout", change: "updated" }] });
    expect(JSON.stringify(set!.json().changes[0].details)).toContain("defaultVariant: off -> on");

    await fetch(`${url}/api/v1/admin/environments/production/overrides/new-checkout`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${token}` },
    });
    const received = await hook.waitFor(2);
    expect(received[1]!.json()).toMatchObject({ changes: [{ type: "flag", key: "new-checkout", change: "updated" }] });
    expect(JSON.stringify(received[1]!.json().changes[0].details)).toContain("defaultVariant: on -> off");
  }, 30_000);
});
