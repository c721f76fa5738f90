/**
 * `flagserve diff`: two real configurations, a real git repository (committed, then edited), a
 * real server whose events must be the ones the diff announces, and the real CLI for exit codes.
 */
import { execFileSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { createFlagServer } from "../../src/index.js";
import { diffConfigurations, formatDiff, GitError } from "../../src/review/index.js";
import { tempDir, type TempDir } from "../helpers/files.js";
import { openSse, type SseBlock } from "../helpers/sse.js";
import { run } from "../cli/run.js";

const OLD = `apiKey: old-secret-key-1
metadata: { team: web }
segments:
  staff: { ends_with: [{ var: email }, "@example.com"] }
  eu: { in: [{ var: country }, [de, fr]] }
  eu-staff: { and: [{ $ref: staff }, { $ref: eu }] }
notifications:
  - { type: webhook, url: "http://127.0.0.1:9/hook" }
flags:
  checkout:
    variants: { "on": true, "off": false }
    defaultVariant: "off"
    targeting: { if: [{ $ref: staff }, "on", null] }
  banner:
    variants: { blue: "#00f", green: "#0f0" }
    defaultVariant: blue
  legacy:
    variants: { x: 1 }
    defaultVariant: x
  eu-promo:
    variants: { a: 1, b: 2 }
    defaultVariant: a
    targeting: { if: [{ $ref: eu-staff }, b, null] }
  sentinel:
    variants: { a: 1, b: 2 }
    defaultVariant: a
`;

/** NEW: checkout's default flipped, banner's variants edited, legacy removed, search added, the staff segment changed. */
const NEW = OLD.replace('defaultVariant: "off"', 'defaultVariant: "on"')
  .replace('green: "#0f0" }', 'green: "#0a0", purple: "#f0f" }')
  .replace(
    "  legacy:\n    variants: { x: 1 }\n    defaultVariant: x\n",
    "  search:\n    state: DISABLED\n    variants: { v1: 1 }\n    defaultVariant: v1\n",
  )
  .replace('"@example.com"', '"@example.org"');

const git = (dir: string, ...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8" });

async function repository(): Promise<TempDir> {
  const dir = await tempDir();
  git(dir.path, "init", "-q", "-b", "main");
  git(dir.path, "config", "user.email", "dev@example.com");
  git(dir.path, "config", "user.name", "dev");
  return dir;
}

describe("diffConfigurations", () => {
  it("per environment: flags added, removed and changed with their fields, segments with the flags they affect", async () => {
    const dir = await tempDir();
    await dir.write("old/dev.yaml", OLD);
    await dir.write("new/dev.yaml", NEW);
    await dir.write("old/gone.yaml", "flags: {}\n");
    await dir.write("new/fresh.yaml", "flags: {}\n");
    const report = await diffConfigurations({ before: dir.file("old"), after: dir.file("new") });
    expect(report.changed).toBe(true);
    expect(report.environments.map((e) => [e.environment, e.status])).toEqual([
      ["dev", "changed"],
      ["fresh", "added"],
      ["gone", "removed"],
    ]);
    const dev = report.environments[0]!;
    expect(dev).toMatchObject({
      added: ["search"],
      removed: ["legacy"],
      changed: [
        { flag: "banner", fields: ["variants"], variants: { added: ["purple"], removed: [], changed: ["green"] } },
        { flag: "checkout", fields: ["defaultVariant"], defaultVariant: { before: "off", after: "on" } },
      ],
      segments: [{ segment: "staff", change: "updated", flags: ["checkout", "eu-promo"] }],
    });
    expect(dev.apiKey).toBeUndefined();
    expect(dev.events).toEqual([
      { event: "flag-updated", data: { flagKey: "banner" } },
      { event: "flag-updated", data: { flagKey: "checkout" } },
      { event: "flag-updated", data: { flagKey: "legacy" } },
      { event: "flag-updated", data: { flagKey: "search" } },
      { event: "config-updated", data: { reason: "segment-modified" } },
    ]);
    const text = formatDiff("text", report);
    expect(text).toContain('  - flag changed: checkout: defaultVariant "off" -> "on"\n');
    expect(text).toContain("  - segment updated: staff, affects checkout, eu-promo\n");
    const markdown = formatDiff("markdown", report);
    expect(markdown).toContain("#### `dev` (changed)\n\n- flags added: `search`\n- flags removed: `legacy`\n");
  });

  it("key and notification changes are reported, the key never shown; metadata changes every flag's answers", async () => {
    const dir = await tempDir();
    await dir.write("old/dev.yaml", OLD);
    await dir.write(
      "new/dev.yaml",
      OLD.replace("old-secret-key-1", "new-secret-key-2").replace("team: web", "team: app").replace("9/hook", "9/other"),
    );
    const report = await diffConfigurations({ before: dir.file("old"), after: dir.file("new") });
    const dev = report.environments[0]!;
    expect(dev.apiKey).toBe("changed");
    expect(dev.notifications).toEqual({ before: 1, after: 1 });
    expect(dev.changed.map((c) => [c.flag, c.fields])).toEqual(
      ["banner", "checkout", "eu-promo", "legacy", "sentinel"].map((f) => [f, ["metadata"]]),
    );
    expect(dev.events.slice(-2)).toEqual([
      { event: "config-updated", data: { reason: "api-key-rotated" } },
      { event: "api-key-rotated", data: {} },
    ]);
    for (const format of ["text", "markdown", "json"] as const) {
      const out = formatDiff(format, report);
      expect(out).not.toContain("secret-key");
      expect(out).not.toContain("9/other");
    }
    expect(formatDiff("text", report)).toContain(
      "  - API key changed (the key is not shown)\n  - notifications changed (1 -> 1 targets)\n",
    );
  });

  it("a flag the change breaks is listed with its problem, not as removed: the server keeps its last good definition", async () => {
    const dir = await tempDir();
    await dir.write("old/dev.yaml", OLD);
    await dir.write("new/dev.yaml", OLD.replace("    defaultVariant: blue\n", "    defaultVariant: red\n"));
    const dev = (await diffConfigurations({ before: dir.file("old"), after: dir.file("new") })).environments[0]!;
    expect(dev).toMatchObject({ removed: [], invalid: ["banner"], events: [] });
    expect(dev.problems[0]?.message).toMatch(/red/);
  });
});

describe("a running server sends the events the diff announces", () => {
  let close: (() => Promise<void>) | undefined;
  afterAll(() => close?.());

  it("for the same edit of a watched file", async () => {
    const dir = await tempDir();
    await dir.write("old/dev.yaml", OLD);
    await dir.write("new/dev.yaml", NEW);
    const expected = (await diffConfigurations({ before: dir.file("old"), after: dir.file("new") })).environments[0]!.events;

    await dir.write("served/dev.yaml", OLD);
    const server = await createFlagServer({ config: dir.file("served"), stateDir: dir.file("state"), admin: false });
    close = () => server.close();
    const sse = await openSse(`${server.url}/api/v1/flags/events`, { "x-api-key": "old-secret-key-1" });
    const named = (b: SseBlock) => b.event !== undefined && b.event !== "heartbeat";
    const before = sse.events().filter(named).length;
    await dir.write("served/dev.yaml", NEW);
    // Then an edit of its own, whose event marks the end of the first edit's.
    await sse.next((b) => b.event === "config-updated", 10_000);
    await dir.write(
      "served/dev.yaml",
      NEW.replace(
        "  sentinel:\n    variants: { a: 1, b: 2 }\n    defaultVariant: a",
        "  sentinel:\n    variants: { a: 1, b: 2 }\n    defaultVariant: b",
      ),
    );
    await sse.next((b) => b.event === "flag-updated" && JSON.parse(b.data!).flagKey === "sentinel", 10_000);
    const received = sse
      .events()
      .filter(named)
      .slice(before, -1)
      .map((b) => {
        const { timestamp: _t, ...data } = JSON.parse(b.data!) as Record<string, unknown>;
        return { event: b.event, data };
      });
    sse.close();
    expect(received).toEqual(expected);
  });
});

describe("flagserve diff --git", () => {
  it("compares the working tree with a revision, without a checkout; --tests reruns only the changed flags' cases", async () => {
    const repo = await repository();
    await repo.write("flags/dev.yaml", OLD);
    await repo.write(
      "flags/dev.test.yaml",
      `tests:
  - { name: staff get checkout, flag: checkout, context: { email: a@example.com }, expect: { variant: "on", reason: TARGETING_MATCH } }
  - { name: banner is blue, flag: banner, expect: { variant: blue } }
  - { name: sentinel is a, flag: sentinel, expect: { variant: a } }
`,
    );
    await repo.write("flags/staging/base.yaml", "flags:\n  x: { variants: { a: 1 }, defaultVariant: a }\n");
    git(repo.path, "add", "-A");
    git(repo.path, "commit", "-qm", "flags");
    await repo.write("flags/dev.yaml", NEW);
    await repo.write("flags/staging/more.yaml", "flags:\n  y: { variants: { a: 1 }, defaultVariant: a }\n");

    const report = await diffConfigurations({ git: "main", after: repo.file("flags"), tests: true });
    expect(report.environments.map((e) => [e.environment, e.status, e.added])).toEqual([
      ["dev", "changed", ["search"]],
      ["staging", "changed", ["y"]],
    ]);
    // The working tree as committed: no changes (the test file is not an environment).
    git(repo.path, "stash", "-u", "-q");
    expect((await diffConfigurations({ git: "HEAD", after: repo.file("flags") })).changed).toBe(false);
    git(repo.path, "stash", "pop", "-q");
    // checkout changed (its case fails now: staff moved to example.org), banner changed; sentinel not run.
    const tests = report.tests!;
    expect(tests.results.map((r) => [r.flag, r.passed])).toEqual([
      ["checkout", false],
      ["banner", true],
    ]);
    await expect(diffConfigurations({ git: "no-such-branch", after: repo.file("flags") })).rejects.toThrow(GitError);

    // The real CLI: exit codes and the one-line errors.
    const changed = await run(["diff", "--git", "main", "--exit-code", "--format", "json"], { cwd: repo.path });
    expect(changed.code).toBe(1);
    const json = JSON.parse(changed.stdout) as {
      environments: { environment: string; added: string[]; removed: string[]; changed: { flag: string; fields: string[] }[] }[];
    };
    expect(json.environments[0]).toMatchObject({
      environment: "dev",
      added: ["search"],
      removed: ["legacy"],
      changed: [
        { flag: "banner", fields: ["variants"] },
        { flag: "checkout", fields: ["defaultVariant"] },
      ],
    });
    const failing = await run(["diff", "--git", "main", "--tests"], { cwd: repo.path });
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain("FAILED: 1 of 2 checks of the changed flags passed");
    expect(failing.stdout).toContain("FAIL flags/dev.test.yaml:2 staff get checkout");
    const unknown = await run(["diff", "--git", "no-such-branch"], { cwd: repo.path });
    expect(unknown).toMatchObject({ code: 2, stdout: "", stderr: "flagserve diff: unknown git revision 'no-such-branch'\n" });
  });
});
