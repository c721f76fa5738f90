/**
 * The program as a whole: --version, --help of every command, and the exit codes of usage errors;
 * run in-process (runCli), and through the real binary for the exit status it ends with.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { run, runHere } from "./run.js";

const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

describe("flagserve (program)", () => {
  it("the binary ends with the exit status the program returns: 0, 1, 2", async () => {
    const [ok, invalid, usage] = await Promise.all([run(["--version"]), run(["validate", "/nonexistent/flags"]), run(["valdiate"])]);
    expect(ok).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain("/nonexistent/flags");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^error: 'valdiate' is not a command/);
  });

  it("prints the version with --version and -v", async () => {
    for (const flag of ["--version", "-v"]) {
      const { code, stdout } = await runHere([flag]);
      expect(code).toBe(0);
      expect(stdout.trim()).toBe(version);
    }
  });

  it("has --help with examples for every command, exit 0", async () => {
    const commands = [
      [],
      ["serve"],
      ["validate"],
      ["init"],
      ["keys"],
      ["keys", "list"],
      ["keys", "rotate"],
      ["eval"],
      ["events"],
      ["session"],
    ];
    const results = await Promise.all(commands.map((c) => runHere([...c, "--help"])));
    results.forEach(({ code, stdout, stderr }, i) => {
      const name = ["flagserve", ...commands[i]!].join(" ");
      expect(code, name).toBe(0);
      expect(stderr, name).toBe("");
      expect(stdout, name).toMatch(new RegExp(`^Usage: ${name}`));
      expect(stdout, name).toContain("Examples:");
      expect(stdout, name).toContain("$ npx flagserve");
    });
    // The top-level help lists every command.
    for (const command of ["serve", "validate", "init", "keys", "eval", "events", "health", "override", "session", "test", "diff"])
      expect(results[0]!.stdout).toMatch(new RegExp(`^  ${command} `, "m"));
  });

  it("groups serve's options under headings, each line within 80 columns", async () => {
    const { stdout } = await run(["serve", "--help"]);
    const headings = stdout.split("\n").filter((line) => /^[A-Z][a-z ]+:$/.test(line));
    expect(headings).toEqual(
      expect.arrayContaining(["Sources:", "Server:", "Events:", "Keys and state:", "Admin and dashboard:", "Test fixture:", "Logging:"]),
    );
    expect(stdout.split("\n").filter((line) => line.length > 80)).toEqual([]);
    expect(stdout.split("\n").length).toBeLessThan(75);
  });

  it("`help COMMAND` works like COMMAND --help", async () => {
    const { code, stdout } = await runHere(["help", "validate"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: flagserve validate/);
  });

  it.each([
    { args: ["validate", "--no-such-option"], message: "unknown option '--no-such-option'", hint: "flagserve validate --help" },
    { args: ["validate", "--format", "yaml"], message: "Allowed choices are text, json", hint: "flagserve validate --help" },
    { args: ["eval", "some-flag"], message: "required option '-e, --env <env>' not specified", hint: "flagserve eval --help" },
    { args: ["eval", "--env", "development"], message: "missing required argument 'flag'", hint: "flagserve eval --help" },
    { args: ["events", "http://127.0.0.1:1"], message: "required option '-k, --key <key>' not specified", hint: "flagserve events --help" },
    { args: ["events", "not a url", "--key", "k"], message: "must be an http(s) URL", hint: "flagserve events --help" },
    { args: ["events", "ftp://example.com", "--key", "k"], message: "must be an http(s) URL", hint: "flagserve events --help" },
    { args: ["keys", "rotate"], message: "missing required argument 'env'", hint: "flagserve keys rotate --help" },
    { args: ["init", "a", "b"], message: "too many arguments", hint: "flagserve init --help" },
    { args: ["--port", "http"], message: "must be an integer from 0 to 65535", hint: "flagserve serve --help" },
    { args: ["serve", "--event-set", "other"], message: "Allowed choices are primary, variant", hint: "flagserve serve --help" },
    { args: ["valdiate"], message: "'valdiate' is not a command nor an existing path (did you mean validate?)", hint: "flagserve --help" },
  ])("usage error $args -> exit 2, one-line error and the --help hint", async ({ args, message, hint }) => {
    const { code, stdout, stderr } = await runHere(args);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^error: /);
    expect(lines[0]).toContain(message);
    expect(lines[1]).toBe(`(run "${hint}" for usage)`);
  });
});
