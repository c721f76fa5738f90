/**
 * The examples of README.md and docs/*.md, as a reader pastes them:
 * - every ```yaml block is a flag file that validates (the loader `flagserve validate` uses),
 *   with the environment variables the page exports before it (`export NAME='value'` in a
 *   ```sh block) and no others; ```yaml fragment marks a part of a file, shown on purpose
 *   without the rest, ```yaml overrides an --overrides file, and ```yaml invalid a file broken
 *   on purpose, whose problems are the ones the next ```text block shows; ```yaml test is a
 *   `flagserve test` file (docs/testing-flags.md's are run by test/testing/docs.test.ts; the
 *   README's must pass against the starter `flagserve init` writes) and ```yaml ci CI steps,
 *   which must parse;
 * - the README's code blocks are the files of examples/ they present;
 * - the README's first-run path and the examples of docs/api.md and docs/ci.md run against a
 *   real server on the bundled example, started in the clone as the README says (a server per
 *   page, with the variables the page exports): each ```sh block followed by a
 *   ```text block must print exactly that text. The port is the server's (the pages say 8080),
 *   and the commands that default to :8080 are given its URL. `npx flagserve` is run as the
 *   program it finds in the clone, bin/flagserve.js: npx's first run in a clone installs the
 *   clone into npm's cache, which rebuilds dist/ under the tests that use it.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { OverrideLayer } from "../../src/admin/overrides.js";
import { testFlags } from "../../src/index.js";
import { runHere } from "../cli/run.js";
import { loadSourceReads } from "../../src/config/load.js";
import { readOnce } from "../../src/sources/read-once.js";
import { BIN, runCli, type CliProcess } from "../helpers/cli.js";
import { PAGES, ROOT } from "./pages.js";

interface Block {
  page: string;
  line: number;
  info: string;
  text: string;
  /** Only blank lines between the end of the previous block and this one. */
  adjacent: boolean;
}

/** The fenced code blocks of a Markdown page, in order. */
function blocksOf(page: string): Block[] {
  const lines = readFileSync(join(ROOT, page), "utf8").split("\n");
  const blocks: Block[] = [];
  let lastEnd = -2;
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S.*)?$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i]!);
    const between = lines.slice(lastEnd + 1, start);
    blocks.push({
      page,
      line: start + 1,
      info: open[1] ?? "",
      text: body.join("\n"),
      adjacent: lastEnd >= 0 && between.every((l) => l.trim() === ""),
    });
    lastEnd = i;
  }
  return blocks;
}

/** `export NAME='value'` lines of the page's shell blocks before `line`. */
function exportsBefore(blocks: Block[], line: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const b of blocks) {
    if (b.line >= line || !/^(sh|bash)\b/.test(b.info)) continue;
    for (const m of b.text.matchAll(/^export ([A-Z_][A-Z0-9_]*)=(?:'([^']*)'|(\S+))/gm)) env[m[1]!] = m[2] ?? m[3]!;
  }
  return env;
}

const ALL = PAGES.map((page) => ({ page, blocks: blocksOf(page) }));
const yamlExamples = ALL.flatMap(({ blocks }) =>
  blocks
    .map((b, i) => ({ ...b, env: exportsBefore(blocks, b.line), shown: blocks.slice(i + 1).find((n) => n.info === "text")?.text ?? "" }))
    .filter((b) => /^yaml\b/.test(b.info)),
);

/** The loader's problems with a YAML example, as `line:col message`. */
async function problemsOf(where: string, b: (typeof yamlExamples)[number]): Promise<string[]> {
  const file = join(dir, where.replace(/[^a-z0-9]+/gi, "-"), "development.yaml");
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, b.text);
  const load = await loadSourceReads([await readOnce(file)], { env: b.env });
  return [...load.problems.values()].flat().map((p) => `${p.line}:${p.col} ${p.message}`);
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flagserve-docs-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("YAML examples", () => {
  it("are there to check, and only marked ones are fragments", () => {
    expect(yamlExamples.filter((b) => b.info === "yaml").length).toBeGreaterThanOrEqual(3);
    for (const b of yamlExamples)
      expect(["yaml", "yaml fragment", "yaml overrides", "yaml invalid", "yaml test", "yaml ci"], `${b.page}:${b.line}`).toContain(b.info);
  });

  it.each(yamlExamples.filter((b) => b.info === "yaml ci").map((b) => [`${b.page}:${b.line}`, b] as const))("%s is YAML", (_where, b) => {
    expect(() => parse(b.text)).not.toThrow();
  });

  it.each(yamlExamples.filter((b) => b.info === "yaml test" && b.page === "README.md").map((b) => [`${b.page}:${b.line}`, b] as const))(
    "%s passes against the starter flagserve init writes",
    async (where, b) => {
      const flags = join(dir, where.replace(/[^a-z0-9]+/gi, "-"), "demo-flags");
      expect((await runHere(["init", flags])).code).toBe(0);
      await writeFile(join(flags, "development.test.yaml"), b.text);
      const report = await testFlags({ sources: [flags] });
      expect(report.problems).toEqual([]);
      expect(report.results.length).toBeGreaterThan(0);
      expect(report.failed).toBe(0);
    },
  );

  it.each(yamlExamples.filter((b) => b.info === "yaml").map((b) => [`${b.page}:${b.line}`, b] as const))(
    "%s validates as written",
    async (where, b) => {
      expect(await problemsOf(where, b)).toEqual([]);
    },
  );

  it.each(yamlExamples.filter((b) => b.info === "yaml invalid").map((b) => [`${b.page}:${b.line}`, b] as const))(
    "%s has the problems shown after it",
    async (where, b) => {
      const shown = b.shown.split("\n").flatMap((l) => /:(\d+:\d+ .*)$/.exec(l)?.[1] ?? []);
      expect(shown.length).toBeGreaterThan(0);
      expect(await problemsOf(where, b)).toEqual(shown);
    },
  );

  it.each(yamlExamples.filter((b) => b.info === "yaml overrides").map((b) => [`${b.page}:${b.line}`, b] as const))(
    "%s is an overrides file that loads",
    async (where, b) => {
      const file = join(dir, `${where.replace(/[^a-z0-9]+/gi, "-")}.yaml`);
      await writeFile(file, b.text);
      const warnings: string[] = [];
      const layer = new OverrideLayer({ logger: { info() {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) }, file });
      await layer.load();
      expect(warnings).toEqual([]);
      expect(Object.keys(layer.list()).length).toBeGreaterThan(0);
    },
  );
});

describe("the README's code blocks", () => {
  const readme = ALL[0]!.blocks;
  it.each(["examples/openfeature-node.mjs", "examples/ci-fixture.test.ts"])("show %s as it is", (file) => {
    expect(readme.map((b) => `${b.text}\n`)).toContain(readFileSync(join(ROOT, file), "utf8"));
  });
});

/** Each ```sh block directly followed by a ```text block: a command and what it prints. */
const runnable = (page: string) => {
  const blocks = ALL.find((p) => p.page === page)!.blocks;
  return blocks.flatMap((b, i) => {
    const next = blocks[i + 1];
    return /^(sh|bash)$/.test(b.info) && next?.info === "text" && next.adjacent
      ? [{ line: b.line, command: b.text, output: next.text }]
      : [];
  });
};

/**
 * A server on the bundled example, started in the clone as the README says (`npx flagserve`), on a
 * free port. The page's commands run in the clone, or with `inEmptyDir` in an empty directory of
 * their own (commands that write files, as in a project without ./flags).
 */
function withServer(env: Record<string, string>, inEmptyDir = false) {
  const ctx = { server: undefined as CliProcess | undefined, port: "", state: "", cwd: ROOT };
  beforeAll(async () => {
    ctx.state = await mkdtemp(join(tmpdir(), "flagserve-docs-state-"));
    if (inEmptyDir) ctx.cwd = await mkdtemp(join(tmpdir(), "flagserve-docs-cwd-"));
    ctx.server = runCli(["--port", "0"], { cwd: ROOT, env: { ...env, XDG_STATE_HOME: ctx.state } });
    ctx.port = (await ctx.server.waitFor(/^ready http:\/\/127\.0\.0\.1:(\d+)$/m))[1]!;
  });
  afterAll(async () => {
    await ctx.server?.stop();
    await rm(ctx.state, { recursive: true, force: true });
    if (ctx.cwd !== ROOT) await rm(ctx.cwd, { recursive: true, force: true });
  });
  /** Runs a page's command as a reader would, against this server. */
  const sh = (command: string) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const url = `http://127.0.0.1:${ctx.port}`;
      const script = command
        .replace(/\b(localhost|127\.0\.0\.1):8080\b/g, `$1:${ctx.port}`)
        .replace(/^(npx flagserve (override|session) .*)$/gm, `$1 --url ${url}`)
        .replace(/\bnpx flagserve\b/g, `"${process.execPath}" "${BIN}"`);
      const vars = { ...process.env, ...env, XDG_STATE_HOME: ctx.state, FLAGSERVE_URL: url };
      execFile("/bin/sh", ["-c", script], { cwd: ctx.cwd, env: vars }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  return { ctx, sh };
}

describe("the README's first-run path against a real server", () => {
  const { ctx, sh } = withServer({});

  it("prints the start-up lines the README shows", () => {
    const shown = ALL[0]!.blocks.find((b) => b.info === "text" && b.text.startsWith("flagserve 0.1.0 serving"))!.text;
    const normal = (text: string) =>
      text
        .trim()
        .replace(/serving \S*flags\.example\.yaml/, "serving EXAMPLE")
        .replace(/fs_production_[\w-]+/g, "KEY")
        .replace(/fsa_[\w-]+/g, "TOKEN")
        .replace(/:(8080|\d{4,5})\b/g, ":PORT");
    expect(normal(ctx.server!.stdout())).toBe(normal(shown));
  });

  const pairs = runnable("README.md");
  it("has the commands to run", () => {
    expect(pairs.length).toBeGreaterThanOrEqual(6);
  });

  // In page order: the override set by one command is seen by the next and cleared after.
  it.each(pairs.map((p) => [`README.md:${p.line}`, p] as const))(
    "%s prints what the page shows",
    async (_where, p) => {
      const ran = await sh(p.command);
      expect({ code: ran.code, stdout: ran.stdout.trimEnd() }, ran.stderr).toEqual({ code: 0, stdout: p.output });
    },
    30_000,
  ); // npx takes seconds to start on a busy machine
});

/**
 * Commands a page shows that cannot run here, by page: every other ```sh block of these pages
 * must be followed by what it prints, so that it is run. The OpenFeature CLI is a Go program,
 * not installed where the tests run.
 */
const NOT_RUN_HERE: Record<string, RegExp> = { "docs/typed-flags.md": /^openfeature /m };

// The pages whose examples call the bundled example's server; each gets its own, started with
// the variables the page exports (the admin token it chooses), and TOKEN set to that token as
// the page does. typed-flags.md's commands write flags.json, so they run in an empty directory.
describe.each(["docs/api.md", "docs/ci.md", "docs/typed-flags.md"])("%s against a real server", (page) => {
  const blocks = ALL.find((p) => p.page === page)!.blocks;
  const env = exportsBefore(blocks, Infinity);
  if (env.FLAGSERVE_ADMIN_TOKEN) env.TOKEN = env.FLAGSERVE_ADMIN_TOKEN;
  const { sh } = withServer(env, page === "docs/typed-flags.md");
  const pairs = runnable(page);

  const notRun = NOT_RUN_HERE[page];
  if (notRun)
    it("runs every command of the page but those that cannot run here", () => {
      const shown = blocks.filter((b) => /^(sh|bash)$/.test(b.info));
      const skipped = shown.filter((b) => notRun.test(b.text));
      expect(skipped.length).toBeGreaterThan(0);
      expect(shown.filter((b) => !skipped.includes(b)).map((b) => b.line)).toEqual(pairs.map((p) => p.line));
    });

  it.each(pairs.map((p) => [`${page}:${p.line}`, p] as const))(
    "%s prints what the page shows",
    async (_where, p) => {
      const ran = await sh(p.command);
      expect({ code: ran.code, stdout: ran.stdout.trimEnd() }, ran.stderr).toEqual({ code: 0, stdout: p.output });
    },
    30_000,
  );
});
