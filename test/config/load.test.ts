import { describe, expect, it } from "vitest";
import { loadConfig, loadInlineConfig } from "../../src/config/index.js";
import { evaluate } from "../../src/engine/index.js";
import { lines, problemLines, useTempDir } from "./helpers.js";

const boolFlag = (key: string, dv = "off") =>
  lines(`flags:`, `  ${key}:`, `    variants: { on: true, off: false }`, `    defaultVariant: ${dv}`);

describe("loadConfig: directory layout", () => {
  const tmp = useTempDir();

  it("loads each file and each subdirectory as an environment", async () => {
    await tmp.write("dev.yaml", lines("apiKey: dev-key-123", boolFlag("a")));
    await tmp.write("ci.yml", boolFlag("b"));
    await tmp.write("prod.json", JSON.stringify({ flags: { c: { variants: { x: 1 }, defaultVariant: "x" } } }));
    await tmp.write("staging/flags.yaml", boolFlag("d"));
    await tmp.write("README.md", "not config");
    await tmp.write("notes.txt", "not config");

    const load = await loadConfig(tmp.path);

    expect(problemLines(load, tmp.path)).toEqual([]);
    expect([...load.environments.keys()]).toEqual(["ci", "dev", "prod", "staging"]);
    const dev = load.environments.get("dev")!;
    expect(dev.config.apiKey).toBe("dev-key-123");
    expect(dev.config.files).toEqual([`${tmp.path}/dev.yaml`]);
    expect(dev.config.flags.a).toEqual({ state: "ENABLED", variants: { on: true, off: false }, defaultVariant: "off", metadata: {} });
    expect([...dev.flags.keys()]).toEqual(["a"]);
    expect(load.environments.get("prod")!.config.flags.c?.variants).toEqual({ x: 1 });
    expect(load.environments.get("staging")!.config.files).toEqual([`${tmp.path}/staging/flags.yaml`]);
  });

  it("merges a subdirectory's files: flags, segments, metadata; notifications concatenate", async () => {
    await tmp.write(
      "web/flags.yaml",
      lines(
        "metadata: { team: web }",
        "flags:",
        "  a:",
        "    variants: { on: true, off: false }",
        "    defaultVariant: off",
        "    targeting: { if: [{ $ref: beta }, on, null] }",
        "notifications:",
        "  - { type: webhook, url: 'https://one.example/hook' }",
      ),
    );
    await tmp.write(
      "web/segments.yaml",
      lines(
        "apiKey: web-key-123",
        "metadata: { owner: alice }",
        "segments:",
        "  beta: { ends_with: [{ var: email }, '@example.com'] }",
        "notifications:",
        "  - { type: slack, url: 'https://two.example/hook' }",
      ),
    );

    const load = await loadConfig(tmp.path);

    expect(problemLines(load, tmp.path)).toEqual([]);
    const web = load.environments.get("web")!;
    expect(web.config.files).toEqual([`${tmp.path}/web/flags.yaml`, `${tmp.path}/web/segments.yaml`]);
    expect(web.config.apiKey).toBe("web-key-123");
    expect(web.config.metadata).toEqual({ team: "web", owner: "alice" });
    expect(Object.keys(web.config.segments)).toEqual(["beta"]);
    expect(web.config.notifications.map((n) => n.url)).toEqual(["https://one.example/hook", "https://two.example/hook"]);
    // the $ref across files resolved: the flag is served by its segment
    const a = web.flags.get("a")!;
    expect(evaluate(a, { email: "x@example.com" })).toMatchObject({ variant: "on", value: true });
  });

  it("a key defined in two files of a subdirectory is an error naming both files", async () => {
    await tmp.write("web/a.yaml", lines("flags:", "  shared:", "    variants: { on: true }", "segments:", "  s: true"));
    await tmp.write(
      "web/b.yaml",
      lines("apiKey: key-one-123", "flags:", "  shared:", "    variants: { on: true }", "$evaluators:", "  s: false"),
    );
    await tmp.write("web/c.yaml", lines("apiKey: key-two-123", "flags: {}"));

    const load = await loadConfig(tmp.path);

    expect(load.environments.has("web")).toBe(false);
    expect(problemLines(load, tmp.path, "web")).toEqual([
      "<dir>/web/b.yaml:3:3 flag 'shared' is also defined in <dir>/web/a.yaml:2:3",
      "<dir>/web/b.yaml:6:3 segment 's' is also defined in <dir>/web/a.yaml:5:3",
      "<dir>/web/c.yaml:1:1 apiKey is also set in <dir>/web/b.yaml:1:1",
    ]);
  });

  it("one bad environment does not stop the others", async () => {
    await tmp.write("good.yaml", boolFlag("a"));
    await tmp.write("bad.yaml", `${boolFlag("a")}colour: red\n`);
    await tmp.write("worse/flags.yaml", "flags: [\n");

    const load = await loadConfig(tmp.path);

    expect([...load.environments.keys()]).toEqual(["good"]);
    expect([...load.problems.keys()]).toEqual(["bad", "worse"]);
  });

  it("an environment named by both a file and a directory is an error, and neither loads", async () => {
    await tmp.write("dev.yaml", boolFlag("a"));
    await tmp.write("dev/flags.yaml", boolFlag("b"));
    await tmp.write("prod.yaml", boolFlag("c"));

    const load = await loadConfig(tmp.path);

    expect([...load.environments.keys()]).toEqual(["prod"]);
    expect(problemLines(load, tmp.path, "")).toEqual(["<dir>/dev.yaml:0:0 environment 'dev' is also defined by <dir>/dev"]);
  });

  it("skips dot-files and dot-directories", async () => {
    await tmp.write("dev.yaml", boolFlag("a"));
    await tmp.write(".flagserve/keys.json", "{}");
    await tmp.write(".git/config.yaml", "not: [valid");
    await tmp.write(".hidden.yaml", "not: [valid");
    await tmp.write("web/flags.yaml", boolFlag("b"));
    await tmp.write("web/.flags.yaml.swp.yaml", "not: [valid");

    const load = await loadConfig(tmp.path);

    expect(problemLines(load, tmp.path)).toEqual([]);
    expect([...load.environments.keys()]).toEqual(["dev", "web"]);
    expect(load.environments.get("web")!.config.files).toEqual([`${tmp.path}/web/flags.yaml`]);
  });

  it("follows symlinked files (Kubernetes ConfigMap layout); ..data is not an environment", async () => {
    await tmp.write("cm/..2026_01_01_00_00_00.123/dev.yaml", boolFlag("a"));
    await tmp.write("cm/..2026_01_01_00_00_00.123/prod.yaml", boolFlag("b"));
    await tmp.link("cm/..data", "..2026_01_01_00_00_00.123");
    await tmp.link("cm/dev.yaml", "..data/dev.yaml");
    await tmp.link("cm/prod.yaml", "..data/prod.yaml");

    const load = await loadConfig(`${tmp.path}/cm`);

    expect(problemLines(load, tmp.path)).toEqual([]);
    expect([...load.environments.keys()]).toEqual(["dev", "prod"]);
    // the path the user sees (stable across ConfigMap swaps), not the timestamped target
    expect(load.environments.get("dev")!.config.files).toEqual([`${tmp.path}/cm/dev.yaml`]);
  });

  it("a dangling symlink is reported for its environment", async () => {
    await tmp.link("dev.yaml", "gone.yaml");
    await tmp.write("prod.yaml", boolFlag("a"));

    const load = await loadConfig(tmp.path);

    expect([...load.environments.keys()]).toEqual(["prod"]);
    expect(problemLines(load, tmp.path, "dev")).toEqual(["<dir>/dev.yaml:0:0 cannot read file: ENOENT"]);
  });

  it("a subdirectory without config files is an error for that environment", async () => {
    await tmp.write("empty/README.md", "nothing here");
    const load = await loadConfig(tmp.path);
    expect(problemLines(load, tmp.path)).toEqual(["<dir>/empty:0:0 directory has no .yaml, .yml or .json file"]);
  });

  it("a subdirectory whose files define no flags is an error", async () => {
    await tmp.write("web/segments.yaml", lines("segments:", "  s: true"));
    const load = await loadConfig(tmp.path);
    expect(problemLines(load, tmp.path)).toEqual([
      "<dir>/web:0:0 no file of this environment defines 'flags' (write `flags: {}` for an environment without flags)",
    ]);
  });

  it("a missing PATH is a problem not tied to an environment", async () => {
    const load = await loadConfig(`${tmp.path}/nope`);
    expect(load.environments.size).toBe(0);
    expect(problemLines(load, tmp.path)).toEqual(["<dir>/nope:0:0 no such file or directory"]);
  });

  it("environment names must be plain", async () => {
    await tmp.write("my env.yaml", boolFlag("a"));
    const load = await loadConfig(tmp.path);
    expect(load.environments.size).toBe(0);
    expect(problemLines(load, tmp.path, "")[0]).toMatch(/^<dir>\/my env\.yaml:0:0 'my env' is not a valid environment name/);
  });

  it("the same apiKey in two environments is an error in both", async () => {
    await tmp.write("a.yaml", lines("apiKey: same-key-123", "flags: {}"));
    await tmp.write("b.yaml", lines("flags: {}", "apiKey: same-key-123"));
    await tmp.write("c.yaml", lines("apiKey: other-key-123", "flags: {}"));

    const load = await loadConfig(tmp.path);

    expect([...load.environments.keys()]).toEqual(["c"]);
    expect(problemLines(load, tmp.path)).toEqual([
      "<dir>/a.yaml:1:1 apiKey is also used by environment 'b' (<dir>/b.yaml:2:1)",
      "<dir>/b.yaml:2:1 apiKey is also used by environment 'a' (<dir>/a.yaml:1:1)",
    ]);
  });
});

describe("loadConfig: single file", () => {
  const tmp = useTempDir();

  it("a top-level environments: map gives one environment per entry", async () => {
    const file = await tmp.write(
      "all.yaml",
      lines(
        "$schema: ./schema/flagserve.schema.json",
        "environments:",
        "  dev:",
        "    apiKey: dev-key-123",
        "    flags: { a: { variants: { on: true }, defaultVariant: on } }",
        "  prod:",
        "    flags: {}",
      ),
    );

    const load = await loadConfig(file);

    expect(problemLines(load, tmp.path)).toEqual([]);
    expect([...load.environments.keys()]).toEqual(["dev", "prod"]);
    expect(load.environments.get("dev")!.config).toMatchObject({ name: "dev", apiKey: "dev-key-123", files: [file] });
    expect(load.environments.get("prod")!.config.apiKey).toBeUndefined();
  });

  it("problems inside one entry only keep that entry out; wrapper problems go under ''", async () => {
    const file = await tmp.write(
      "all.yaml",
      lines(
        "environments:",
        "  dev:",
        "    flags: { a: { variants: { on: true }, state: on } }",
        "  prod:",
        "    flags: {}",
        "  staging:",
        "    segments: {}",
        "  bad name:",
        "    flags: {}",
        "extra: 1",
      ),
    );

    const load = await loadConfig(file);

    // dev's only problem is inside flag a: dev is loaded without it
    expect([...load.environments.keys()]).toEqual(["dev", "prod"]);
    expect(load.environments.get("dev")!.config.invalidFlags).toEqual({
      a: "invalid flag definition: flags.a.state: must be one of ENABLED, DISABLED",
    });
    expect(problemLines(load, tmp.path, "dev")).toEqual(["<dir>/all.yaml:3:50 flags.a.state: must be one of ENABLED, DISABLED"]);
    expect(problemLines(load, tmp.path, "staging")).toEqual([
      "<dir>/all.yaml:6:3 missing 'flags' (write `flags: {}` for an environment without flags)",
    ]);
    expect(problemLines(load, tmp.path, "")).toEqual([
      "<dir>/all.yaml:8:3 'bad name' is not a valid environment name: environment names use letters, digits, '.', '_' and '-', and start with a letter or digit",
      "<dir>/all.yaml:10:1 unknown property 'extra' (expected $schema, environments)",
    ]);
  });

  it("a file without environments: is one environment named by its stem", async () => {
    const file = await tmp.write("local.yml", boolFlag("a"));
    const load = await loadConfig(file);
    expect(problemLines(load, tmp.path)).toEqual([]);
    expect([...load.environments.keys()]).toEqual(["local"]);
  });

  it("a broken single-environment file is reported under its stem; a broken environments: file under ''", async () => {
    const one = await tmp.write("one.yaml", "flags: [\n");
    const many = await tmp.write("many.yaml", lines("environments:", "  dev:", "    flags: [", ""));
    expect([...(await loadConfig(one)).problems.keys()]).toEqual(["one"]);
    expect([...(await loadConfig(many)).problems.keys()]).toEqual([""]);
  });

  it("a standalone file without flags is an error", async () => {
    const file = await tmp.write("dev.yaml", lines("# flags were here", "metadata: { team: web }"));
    const load = await loadConfig(file);
    expect(problemLines(load, tmp.path)).toEqual([
      "<dir>/dev.yaml:2:1 missing 'flags' (write `flags: {}` for an environment without flags)",
    ]);
  });

  it("an explicit empty flags map is a valid environment without flags", async () => {
    const load = await loadConfig(await tmp.write("dev.yaml", "flags: {}\n"));
    expect(problemLines(load, tmp.path)).toEqual([]);
    expect(load.environments.get("dev")!.flags.size).toBe(0);
  });
});

describe("flagd compatibility", () => {
  const tmp = useTempDir();

  it("a flagd flag file (YAML) loads unchanged", async () => {
    const file = await tmp.write(
      "flagd.yaml",
      lines(
        "# yaml-language-server: $schema=https://flagd.dev/schema/v0/flags.json",
        "$schema: https://flagd.dev/schema/v0/flags.json",
        "metadata:",
        "  flagSetId: shop",
        "  version: '3'",
        "flags:",
        "  myBoolFlag:",
        "    state: ENABLED",
        "    variants:",
        "      'on': true",
        "      'off': false",
        "    defaultVariant: 'on'",
        "  headerColor:",
        "    state: ENABLED",
        "    variants:",
        '      red: "#FF0000"',
        '      blue: "#0000FF"',
        "    defaultVariant: red",
        "    targeting:",
        "      if:",
        '      - "$ref": emailWithFaas',
        "      - fractional:",
        "        - var:",
        "          - email",
        "        - - red",
        "          - 50",
        "        - - blue",
        "          - 50",
        "      - null",
        "  myObjectFlag:",
        "    state: DISABLED",
        "    variants:",
        "      object1: { key: val }",
        "    defaultVariant: null",
        "    metadata: { owner: team-a, rank: 2, beta: true }",
        '"$evaluators":',
        "  emailWithFaas:",
        "    in:",
        '    - "@faas.com"',
        "    - var:",
        "      - email",
      ),
    );

    const load = await loadConfig(file);

    expect(problemLines(load, tmp.path)).toEqual([]);
    const env = load.environments.get("flagd")!;
    expect(env.config.metadata).toEqual({ flagSetId: "shop", version: "3" });
    expect(Object.keys(env.config.segments)).toEqual(["emailWithFaas"]);
    expect(env.config.flags.myBoolFlag).toMatchObject({ variants: { on: true, off: false }, defaultVariant: "on" });
    expect(env.config.flags.myObjectFlag).toMatchObject({ state: "DISABLED", defaultVariant: null });
    expect(evaluate(env.flags.get("myBoolFlag")!, {})).toMatchObject({ value: true, reason: "STATIC" });
  });

  it("flagd's daemon format: flags as an array of objects with key (JSON)", async () => {
    const file = await tmp.write(
      "daemon.json",
      JSON.stringify(
        {
          $schema: "https://flagd.dev/schema/v0/flagd.json",
          flags: [
            { key: "a", state: "ENABLED", variants: { on: true, off: false }, defaultVariant: "off" },
            { key: "b", state: "ENABLED", variants: { one: 1, two: 2 }, defaultVariant: "two", targeting: {} },
          ],
        },
        null,
        2,
      ),
    );

    const load = await loadConfig(file);

    expect(problemLines(load, tmp.path)).toEqual([]);
    const env = load.environments.get("daemon")!;
    expect(Object.keys(env.config.flags)).toEqual(["a", "b"]);
    expect(env.config.flags.a).toEqual({ state: "ENABLED", variants: { on: true, off: false }, defaultVariant: "off", metadata: {} });
    expect(env.flags.get("b")!.rule).toBeUndefined();
  });

  it("a key listed twice in the array form is an error", async () => {
    const file = await tmp.write(
      "daemon.yaml",
      lines("flags:", "  - key: a", "    variants: { on: true }", "  - key: a", "    variants: { on: true }"),
    );
    const load = await loadConfig(file);
    expect(problemLines(load, tmp.path)).toEqual(["<dir>/daemon.yaml:4:5 flag 'a' is also defined in <dir>/daemon.yaml:2:5"]);
  });

  it("flag keys may be anything flagd allows", async () => {
    const file = await tmp.write(
      "dev.yaml",
      lines("flags:", "  'Weird Key/with.dots:and spaces':", "    variants: { on: true }", "  '123':", "    variants: { on: true }"),
    );
    const load = await loadConfig(file);
    expect(problemLines(load, tmp.path)).toEqual([]);
    expect(Object.keys(load.environments.get("dev")!.config.flags).sort()).toEqual(["123", "Weird Key/with.dots:and spaces"]);
  });

  it("YAML merge keys (supported by flagd's YAML reader) work", async () => {
    const file = await tmp.write(
      "dev.yaml",
      lines(
        "flags:",
        "  a: &base",
        "    variants: { on: true, off: false }",
        "    defaultVariant: off",
        "  b:",
        "    <<: *base",
        "    defaultVariant: on",
      ),
    );
    const load = await loadConfig(file);
    expect(problemLines(load, tmp.path)).toEqual([]);
    expect(load.environments.get("dev")!.config.flags.b).toMatchObject({ variants: { on: true, off: false }, defaultVariant: "on" });
  });
});

describe("${VAR} expansion", () => {
  const tmp = useTempDir();
  const file = () =>
    tmp.write(
      "dev.yaml",
      lines(
        "flags:",
        "  a:",
        '    variants: { tpl: "${HOOK_URL}", lit: "$${HOOK_URL}" }',
        "    defaultVariant: tpl",
        "notifications:",
        '  - { type: webhook, url: "${HOOK_URL}", secret: "s-${HOOK_SECRET}-$${HOOK_SECRET}" }',
      ),
    );

  it("expands in notifications only, never in flags", async () => {
    const load = await loadConfig(await file(), { env: { HOOK_URL: "https://hooks.example/x", HOOK_SECRET: "42" } });

    expect(problemLines(load, tmp.path)).toEqual([]);
    const env = load.environments.get("dev")!;
    expect(env.config.notifications).toEqual([{ type: "webhook", url: "https://hooks.example/x", secret: "s-42-${HOOK_SECRET}" }]);
    expect(env.config.flags.a?.variants).toEqual({ tpl: "${HOOK_URL}", lit: "$${HOOK_URL}" });
  });

  it("an unset variable is an error naming it", async () => {
    const load = await loadConfig(await file(), { env: { HOOK_URL: "https://hooks.example/x" } });
    expect(problemLines(load, tmp.path)).toEqual(["<dir>/dev.yaml:6:50 environment variable HOOK_SECRET is not set"]);
  });

  it("reads process.env by default", async () => {
    process.env.FLAGSERVE_TEST_HOOK = "https://hooks.example/env";
    try {
      await tmp.write("dev.yaml", lines("flags: {}", "notifications:", '  - { type: slack, url: "${FLAGSERVE_TEST_HOOK}" }'));
      const load = await loadConfig(`${tmp.path}/dev.yaml`);
      expect(load.environments.get("dev")!.config.notifications[0]?.url).toBe("https://hooks.example/env");
    } finally {
      delete process.env.FLAGSERVE_TEST_HOOK;
    }
  });

  it("the expanded URL must be http(s), and the message does not echo it", async () => {
    const load = await loadConfig(await file(), { env: { HOOK_URL: "ftp://secret-token@x", HOOK_SECRET: "1" } });
    const problems = problemLines(load, tmp.path);
    expect(problems).toEqual(["<dir>/dev.yaml:6:27 notifications[0].url: must be an http or https URL"]);
  });
});

describe("loadInlineConfig", () => {
  it("validates like a file and locates problems at <inline:ENV> with the path", async () => {
    const load = await loadInlineConfig({
      dev: { flags: { a: { variants: { on: true, off: false }, defaultVariant: "off" } } },
      bad: { flags: { a: { variants: { on: true }, defaultVariant: "nope", state: "MAYBE" } } },
    });

    expect([...load.environments.keys()]).toEqual(["bad", "dev"]);
    expect(Object.keys(load.environments.get("bad")!.config.flags)).toEqual([]);
    expect(load.environments.get("dev")!.config.files).toEqual([]);
    expect(problemLines(load, "")).toEqual([
      "<inline:bad>:0:0 flags.a.state: must be one of ENABLED, DISABLED",
      "<inline:bad>:0:0 defaultVariant 'nope' is not one of the variants ('on') (at flags.a.defaultVariant)",
    ]);
  });

  it("keeps a private copy of the caller's object", async () => {
    const doc = { flags: { a: { variants: { on: true }, defaultVariant: "on" } } };
    const load = await loadInlineConfig({ dev: doc });
    doc.flags.a.variants.on = false;
    expect(load.environments.get("dev")!.config.flags.a?.variants).toEqual({ on: true });
  });

  it("reports engine errors with their path", async () => {
    const load = await loadInlineConfig({
      dev: { flags: { a: { variants: { on: true }, targeting: { if: [{ $ref: "nope" }, "on", null] } } } },
    });
    const [problem] = problemLines(load, "");
    expect(problem).toMatch(/^<inline:dev>:0:0 .*nope.* \(at flags\.a\.targeting\.if\[0\]\.\$ref\)$/);
  });
});

describe("a $ref expansion bomb in a file", () => {
  const tmp = useTempDir();

  it("loads (each segment compiled once) and evaluates: 40 levels, each referencing the previous twice", async () => {
    const segments = ["  s0: { '==': [{ var: plan }, gold] }"];
    for (let i = 1; i <= 40; i++) segments.push(`  s${i}: { or: [{ $ref: s${i - 1} }, { $ref: s${i - 1} }] }`);
    const file = await tmp.write(
      "dev.yaml",
      lines(
        "segments:",
        ...segments,
        "flags:",
        "  f: { variants: { 'on': true, 'off': false }, defaultVariant: 'off', targeting: { if: [{ $ref: s40 }, 'on', null] } }",
      ),
    );
    const load = await loadConfig(file);
    expect(load.problems.size).toBe(0);
    const f = load.environments.get("dev")!.flags.get("f")!;
    expect(evaluate(f, { plan: "gold" })).toMatchObject({ variant: "on" });
    expect(evaluate(f, { plan: "silver" })).toMatchObject({ variant: "off", reason: "DEFAULT" });
  });
});
