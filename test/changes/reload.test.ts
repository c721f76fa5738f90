/** applyLoad: how a fresh load becomes the live state (last good kept, nothing spurious). */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyLoad, type EnvironmentChange, type ReloadContext } from "../../src/changes/reload.js";
import { loadInlineConfig, type ConfigLoad } from "../../src/config/index.js";
import { evaluate } from "../../src/engine/evaluate.js";
import { keyDigest, recordRotation } from "../../src/store/keys.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { reloadContext } from "../helpers/server.js";

const env = (defaultVariant: string, extra: Record<string, unknown> = {}) => ({
  apiKey: "reload-key-0123456789",
  flags: { f: { variants: { on: true, off: false }, defaultVariant } },
  ...extra,
});

let dir: TempDir;
let ctx: ReloadContext;
let applied: EnvironmentChange[][];

beforeEach(async () => {
  dir = await tempDir();
  applied = [];
  ctx = reloadContext(dir.file("state"), (c) => applied.push(c));
  await applyLoad(await loadInlineConfig({ dev: env("off") }), ctx);
  applied = [];
});

afterEach(async () => {
  ctx.hub.close();
});

/** A full collection, once the current job is done (a WeakRef's target lives until then). */
async function collectGarbage(): Promise<void> {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  await new Promise((resolve) => setImmediate(resolve));
  gc();
}

describe("applyLoad", () => {
  it("keeps nothing of an apply once it is done: the snapshot it replaced can be collected", async () => {
    const replaced = new WeakRef(ctx.store.get("dev")!);
    await applyLoad(await loadInlineConfig({ dev: env("on") }), ctx);
    expect(applied).toHaveLength(1);
    applied = []; // the changes name the snapshot they replaced
    await collectGarbage();
    expect(replaced.deref()).toBeUndefined();
  });

  it("keeps the same snapshot (and ETag) when nothing a client sees changed", async () => {
    const before = ctx.store.get("dev");
    expect(await applyLoad(await loadInlineConfig({ dev: env("off") }), ctx)).toEqual([]);
    expect(ctx.store.get("dev")).toBe(before);
    expect(applied).toEqual([]);
  });

  it("takes a new notifications list silently", async () => {
    const before = ctx.store.get("dev")!;
    const next = env("off", { notifications: [{ type: "webhook", url: "http://127.0.0.1:9/hook" }] });
    expect(await applyLoad(await loadInlineConfig({ dev: next }), ctx)).toEqual([]);
    const after = ctx.store.get("dev")!;
    expect(after).not.toBe(before);
    expect(after.config.notifications).toEqual([{ type: "webhook", url: "http://127.0.0.1:9/hook" }]);
    expect(after.configEtag).toBe(before.configEtag);
  });

  it("keeps the last good snapshot of an invalid environment and records its problems", async () => {
    const before = ctx.store.get("dev");
    const changes = await applyLoad(await loadInlineConfig({ dev: env("on", { colour: "red" }) }), ctx);
    expect(changes).toEqual([]);
    expect(ctx.store.get("dev")).toBe(before);
    expect(ctx.store.problems.get("dev")?.[0]?.message).toMatch(/colour/);
  });

  describe("a flag broken by an edit", () => {
    const two = (f: object, g: object, extra: Record<string, unknown> = {}) => ({
      apiKey: "reload-key-0123456789",
      flags: { f: { variants: { on: true, off: false }, ...f }, g: { variants: { on: true, off: false }, ...g }, ...extra },
    });
    const answer = (flag: string) => evaluate(ctx.store.get("dev")!.flags.get(flag)!, {});
    const changed = () => applied.flat().flatMap((c) => c.changes.map((x) => (x.kind === "flag" ? `${x.key}:${x.change}` : x.kind)));

    beforeEach(async () => {
      await applyLoad(await loadInlineConfig({ dev: two({ defaultVariant: "off" }, { defaultVariant: "off" }) }), ctx);
      applied = [];
    });

    it("keeps its last good definition while the other flags' edits apply, with events for those only", async () => {
      const edit = two({ defaultVariant: "maybe" }, { defaultVariant: "on" });
      await applyLoad(await loadInlineConfig({ dev: edit }), ctx);
      expect(changed()).toEqual(["g:updated"]);
      expect(answer("f")).toMatchObject({ value: false, variant: "off", reason: "STATIC" });
      expect(answer("g")).toMatchObject({ value: true, variant: "on" });
      expect(ctx.store.problems.get("dev")?.map((p) => p.message)).toEqual([expect.stringMatching(/defaultVariant 'maybe'/)]);

      // broken again, differently: still the last good definition, still no event for it
      applied = [];
      await applyLoad(
        await loadInlineConfig({ dev: two({ defaultVariant: "off", targeting: { nope: [] } }, { defaultVariant: "on" }) }),
        ctx,
      );
      expect(changed()).toEqual([]);
      expect(answer("f")).toMatchObject({ variant: "off", reason: "STATIC" });

      // fixed: the new definition applies, with its event; no problem left
      await applyLoad(await loadInlineConfig({ dev: two({ defaultVariant: "on" }, { defaultVariant: "on" }) }), ctx);
      expect(changed()).toEqual(["f:updated"]);
      expect(answer("f")).toMatchObject({ variant: "on" });
      expect(ctx.store.problems.has("dev")).toBe(false);
    });

    it("with no good version yet, answers PARSE_ERROR (and is listed by evaluate-all), without an event", async () => {
      await applyLoad(
        await loadInlineConfig({ dev: two({ defaultVariant: "off" }, { defaultVariant: "off" }, { h: { variants: { a: 1, b: "x" } } }) }),
        ctx,
      );
      expect(changed()).toEqual([]);
      expect(answer("h")).toMatchObject({ key: "h", errorCode: "PARSE_ERROR", errorDetails: expect.stringContaining("same type") });
      expect(ctx.store.get("dev")!.flagKeys).toEqual(["f", "g", "h"]);
      expect(ctx.store.problems.get("dev")).toHaveLength(1);

      // once fixed it is a new flag
      await applyLoad(
        await loadInlineConfig({
          dev: two({ defaultVariant: "off" }, { defaultVariant: "off" }, { h: { variants: { a: 1, b: 2 }, defaultVariant: "b" } }),
        }),
        ctx,
      );
      expect(changed()).toEqual(["h:created"]);
      expect(answer("h")).toMatchObject({ value: 2, reason: "STATIC" });
    });
  });

  it("removes nothing when the configuration could not be read at all", async () => {
    const unreadable: ConfigLoad = {
      environments: new Map(),
      problems: new Map([["", [{ file: "/gone", line: 0, col: 0, message: "cannot read directory: ENOENT" }]]]),
    };
    expect(await applyLoad(unreadable, ctx)).toEqual([]);
    expect(ctx.store.get("dev")).toBeDefined();
  });

  it("removes an environment whose files are gone, and reports its flags deleted", async () => {
    const changes = await applyLoad(await loadInlineConfig({}), ctx);
    expect(ctx.store.get("dev")).toBeUndefined();
    expect(changes.map((c) => [c.env, c.changes.map((x) => (x.kind === "flag" ? `${x.key}:${x.change}` : x.kind))])).toEqual([
      ["dev", ["f:deleted"]],
    ]);
  });

  it("with partial, touches only the environments in the load", async () => {
    await applyLoad(await loadInlineConfig({ dev: env("off"), qa: env("off", { apiKey: "qa-key-0123456789" }) }), ctx);
    const qa = ctx.store.get("qa");
    await applyLoad(await loadInlineConfig({ dev: env("on") }), ctx, { partial: true });
    expect(ctx.store.get("qa")).toBe(qa);
    expect(ctx.store.get("dev")!.config.flags.f!.defaultVariant).toBe("on");
  });
});

describe("key rotation", () => {
  const K1 = "reload-key-0123456789";
  const stream = (key: string) => {
    const s = { closed: false, keyDigest: keyDigest(key), ip: "127.0.0.1", send: () => {}, close: () => void (s.closed = true) };
    ctx.hub.subscribe("dev", "events", s);
    return s;
  };
  const rotateTo = async (key: string) => applyLoad(await loadInlineConfig({ dev: env("off", { apiKey: key }) }), ctx);
  const accepts = (key: string) => ctx.store.authenticate(key) !== undefined;

  it("keeps the old key for --key-grace; a grace recorded by keys rotate --revoke-now wins", async () => {
    ctx.keyGraceSeconds = 3600;
    const onK1 = stream(K1);
    await rotateTo("reload-key-2-0123456789");
    expect(accepts(K1)).toBe(true);
    expect(onK1.closed).toBe(false);

    const onK2 = stream("reload-key-2-0123456789");
    await recordRotation(ctx.stateDir, "dev", "reload-key-2-0123456789", 0);
    await rotateTo("reload-key-3-0123456789");
    expect(accepts("reload-key-2-0123456789")).toBe(false);
    expect(onK2.closed).toBe(true);
    // Revoking the second key ends its streams only: the first is still within its own grace.
    expect(accepts(K1)).toBe(true);
    expect(onK1.closed).toBe(false);
  });

  it("accepts the old key from the moment the new one works (retired before the swap)", async () => {
    ctx.keyGraceSeconds = 3600;
    const seen: boolean[] = [];
    const stop = ctx.store.onReplace(() => seen.push(accepts(K1), accepts("reload-key-2-0123456789")));
    await rotateTo("reload-key-2-0123456789");
    stop();
    expect(seen).toEqual([true, true]);
  });

  it("refuses a key it has been accepting as soon as a reload replaces it (no grace)", async () => {
    expect(accepts(K1)).toBe(true);
    expect(ctx.store.authenticate(K1)).toBe(ctx.store.get("dev")); // the second time from the accepted keys
    await rotateTo("reload-key-2-0123456789");
    expect(accepts(K1)).toBe(false);
    expect(ctx.store.authenticate("reload-key-2-0123456789")).toBe(ctx.store.get("dev"));
    expect(accepts(" reload-key-2-0123456789")).toBe(false);
  });

  it("ignores a recorded grace that was for another key", async () => {
    ctx.keyGraceSeconds = 3600;
    await recordRotation(ctx.stateDir, "dev", "some-other-key-0123456789", 0);
    await rotateTo("reload-key-2-0123456789");
    expect(accepts(K1)).toBe(true);
  });
});
