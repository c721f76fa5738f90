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

describe("what changed in a flag, before and after", () => {
  const SEARCH = `flags:
  search-algorithm:
    variants: { classic: c, vector: v, hybrid: h }
    defaultVariant: classic
    metadata: { owner: search }
    targeting:
      if:
        - { in: [{ var: country }, [de, fr]] }
        - vector
        - fractional:
            - [classic, 50]
            - [hybrid, 50]
  search-config:
    variants: { small: { model: small, k: 10 }, big: { model: big, k: 50 } }
    defaultVariant: small
`;
  const EDITED = SEARCH.replace("[de, fr]]", "[de, fr, it]]")
    .replace("[classic, 50]", "[classic, 40]")
    .replace("[hybrid, 50]\n", "[hybrid, 50]\n            - [vector, 10]\n")
    .replace("vector: v,", 'vector: V, "new": n,')
    .replace("owner: search", "owner: ranking")
    .replace("{ model: small, k: 10 }", "{ model: small, k: 20 }");

  async function report(before: string, after: string) {
    const dir = await tempDir();
    await dir.write("old/dev.yaml", before);
    await dir.write("new/dev.yaml", after);
    return diffConfigurations({ before: dir.file("old"), after: dir.file("new") });
  }

  it("text: variants with their values, metadata, and the targeting as a rule diff", async () => {
    const text = formatDiff("text", await report(SEARCH, EDITED));
    expect(text).toContain(
      `  - flag changed: search-algorithm: variants, targeting, metadata
      variant added: "new" = "n"
      variant changed: "vector" = "v" -> "V"
      targeting:
         if:
        -  - { in: [ { var: country }, [ de, fr ] ] }
        +  - { in: [ { var: country }, [ de, fr, it ] ] }
           - vector
           - fractional:
        -      - [ classic, 40 ]
`.replace(
        "-      - [ classic, 40 ]",
        "-      - [ classic, 50 ]\n        +      - [ classic, 40 ]\n               - [ hybrid, 50 ]\n        +      - [ vector, 10 ]",
      ),
    );
    expect(text).toContain('      metadata changed: "owner" = "search" -> "ranking"\n');
    // A variant whose value is an object: a diff of it.
    expect(text).toContain(`  - flag changed: search-config: variants
      variant changed: "small":
         model: small
        -k: 10
        +k: 20
`);
  });

  it("markdown: the rule diff as a diff block inside the flag's item", async () => {
    const markdown = formatDiff("markdown", await report(SEARCH, EDITED));
    expect(markdown).toContain(`- flag changed: \`search-algorithm\`: variants, targeting, metadata
  - variant added: \`"new"\` = \`"n"\`
  - variant changed: \`"vector"\` = \`"v"\` -> \`"V"\`
  - targeting:
    \`\`\`diff
     if:
    -  - { in: [ { var: country }, [ de, fr ] ] }
    +  - { in: [ { var: country }, [ de, fr, it ] ] }
`);
    expect(markdown).toContain('  - metadata changed: `"owner"` = `"search"` -> `"ranking"`\n');
  });

  it("json: before and after of each field that changed; a rule reformatted is no change", async () => {
    const diff = await report(SEARCH, EDITED);
    const search = diff.environments[0]!.changed.find((c) => c.flag === "search-algorithm")!;
    expect(search.variants).toMatchObject({ added: ["new"], removed: [], changed: ["vector"], after: { vector: "V", new: "n" } });
    expect(search.targeting?.before).toEqual({
      if: [
        { in: [{ var: "country" }, ["de", "fr"]] },
        "vector",
        {
          fractional: [
            ["classic", 50],
            ["hybrid", 50],
          ],
        },
      ],
    });
    expect(search.metadata).toMatchObject({ changed: ["owner"], before: { owner: "search" }, after: { owner: "ranking" } });
    const reformatted = SEARCH.replace(
      "        - fractional:\n            - [classic, 50]\n            - [hybrid, 50]\n",
      "        - { fractional: [[classic, 50], [hybrid, 50]] }\n",
    );
    expect(reformatted).not.toBe(SEARCH);
    expect((await report(SEARCH, reformatted)).changed).toBe(false);
  });

  it("targeting added or removed says so; a long rule is shown by its changes", async () => {
    const plain = "flags:\n  f:\n    variants: { a: 1, b: 2 }\n    defaultVariant: a\n";
    const targeted = `${plain}    targeting: { if: [{ var: beta }, b] }\n`;
    expect(formatDiff("text", await report(plain, targeted))).toContain(
      "      targeting (added):\n        +if:\n        +  - { var: beta }\n        +  - b\n",
    );
    expect(formatDiff("text", await report(targeted, plain))).toContain(
      "      targeting (removed: every evaluation answers the default):\n        -if:\n",
    );
    const branches = (n: number, last: string) =>
      `${plain}    targeting:\n      if:\n${Array.from({ length: n }, (_, i) => `        - { "==": [{ var: n }, ${i}] }\n        - ${i === n - 1 ? last : "a"}\n`).join("")}`;
    const text = formatDiff("text", await report(branches(30, "a"), branches(30, "b")));
    expect(text).toContain("      targeting:\n        ...\n");
    expect(text).toContain("        -  - a\n        +  - b\n");
    expect(text.split("\n").filter((l) => l.startsWith("           - ")).length).toBeLessThanOrEqual(3);
  });

  it("keys, names and values from the files reach the terminal escaped: no forged line, no control character", async () => {
    const bad = 'flags:\n  "f\\nforged line 1":\n    variants: { a: "x", b: "y" }\n    defaultVariant: a\n';
    const edited = bad.replace('b: "y"', 'b: "y\\u001b[2J\\nforged line 2\\u202e", "c\\nforged line 3": "z"');
    const text = formatDiff("text", await report(bad, edited));
    expect(text).toContain("flag changed: f\\u000aforged line 1: variants");
    expect(text).not.toMatch(/[\u001b\u202e]/);
    expect(text).not.toMatch(/^forged line/m);
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
