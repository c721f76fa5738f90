/** `flagserve init [DIR]`: a commented starter that validates, with editor autocompletion. */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { Command } from "commander";
import { invocation } from "./invocation.js";
import { INSTALLED_SCHEMA, PACKAGE_ROOT, VERSION, displayPath, err, out } from "./paths.js";

interface InitFlags {
  force?: boolean;
  schema?: string;
}

const SCHEMA_IN_PACKAGE = join("node_modules", "flagserve", "schema", "flagserve.schema.json");
export const SCHEMA_URL = `https://cdn.jsdelivr.net/npm/flagserve@${VERSION}/schema/flagserve.schema.json`;

const toPosix = (p: string) => p.split(sep).join("/");

/**
 * What the `# yaml-language-server: $schema=` line of a file in `dir` points at:
 * 1. flagserve installed in the project (node_modules/flagserve in `dir` or any parent):
 *    a relative path to it, which keeps working for every clone and follows upgrades;
 * 2. `dir` inside the flagserve package itself (a checkout): a relative path to its schema;
 * 3. otherwise (`npx flagserve init` from npx's cache, a global install): the schema of this
 *    exact version on the npm CDN. An absolute path into npx's cache would break on the next
 *    cache clean and on every other machine the files are committed for.
 */
export function schemaReference(dir: string): { ref: string; source: "project" | "package" | "cdn" } {
  const abs = resolve(dir);
  for (let at = abs; ; at = dirname(at)) {
    const candidate = join(at, SCHEMA_IN_PACKAGE);
    if (existsSync(candidate)) return { ref: toPosix(relative(abs, candidate)), source: "project" };
    if (dirname(at) === at) break;
  }
  const root = resolve(PACKAGE_ROOT);
  if (abs === root || abs.startsWith(root + sep)) return { ref: toPosix(relative(abs, INSTALLED_SCHEMA)), source: "package" };
  return { ref: SCHEMA_URL, source: "cdn" };
}

const header = (schema: string, env: string) => `# yaml-language-server: $schema=${schema}
#
# flagserve environment "${env}": the file name (without .yaml) is the environment name.
# Save an edit and a running flagserve reloads it at once; a broken edit is reported as
# file:line:col while the last good version keeps being served. \`npx flagserve validate\`
# checks without serving. Flags follow flagd's format: https://flagd.dev/reference/flag-definitions/
`;

export function developmentFile(schema: string): string {
  return `${header(schema, "development")}
# Clients send the key as \`X-API-Key: <key>\` or \`Authorization: Bearer <key>\`.
# A fixed key is handy for local development and CI; see production.yaml for a generated one.
# Changing it here keeps the old key working for the server's --key-grace (default one hour);
# \`npx flagserve keys revoke development\` ends that at once (for a key that leaked).
apiKey: dev-local-key-change-me

# Flag-set metadata, returned with every evaluation (a flag's own metadata wins).
# Primitive values only.
metadata:
  team: my-team

# Segments: named, reusable rules (JsonLogic). A segment is true when the evaluation context
# belongs to it; use it in targeting as { $ref: <name> }.
segments:
  beta-testers:
    ends_with: [{ var: email }, "@example.com"]

flags:
  # A boolean flag with targeting: "on" for the beta testers, "off" for everyone else.
  # Targeting returns a variant name, or null to fall back to defaultVariant.
  new-checkout:
    state: ENABLED # ENABLED | DISABLED (a disabled flag answers reason DISABLED, no value)
    variants:
      "on": true
      "off": false
    defaultVariant: "off"
    targeting:
      if: [{ $ref: beta-testers }, "on", null]
    metadata:
      owner: checkout

  # A multi-variant flag with a percentage rollout: beta testers always get "green"; everyone
  # else is split 80/10/10 by \`fractional\`, hashed on the context's targetingKey, so each user
  # keeps their variant. Without a targetingKey the answer is 400 TARGETING_KEY_MISSING.
  banner-color:
    variants:
      blue: "#1f6feb"
      green: "#2da44e"
      purple: "#8250df"
    defaultVariant: blue
    targeting:
      if:
        - { $ref: beta-testers }
        - green
        - fractional:
            - [blue, 80]
            - [green, 10]
            - [purple, 10]
`;
}

export function productionFile(schema: string): string {
  return `${header(schema, "production")}
# No apiKey: flagserve generates a random one when it first sees this environment, prints it
# at start-up (and in \`npx flagserve keys\`) and keeps it in this configuration's private
# state directory, outside the project (\`npx flagserve keys dir\` prints it).
# \`npx flagserve keys rotate production\` replaces it; the old key keeps working for the
# server's --key-grace (default one hour) unless you add --revoke-now.

metadata:
  team: my-team

segments:
  beta-testers:
    ends_with: [{ var: email }, "@example.com"]

flags:
  # Still off for customers; only the beta testers see it.
  new-checkout:
    variants:
      "on": true
      "off": false
    defaultVariant: "off"
    targeting:
      if: [{ $ref: beta-testers }, "on", null]

  # A careful rollout: 95% keep blue, 5% see green.
  banner-color:
    variants:
      blue: "#1f6feb"
      green: "#2da44e"
      purple: "#8250df"
    defaultVariant: blue
    targeting:
      fractional:
        - [blue, 95]
        - [green, 5]
`;
}

/** The test file's schema beside the flag files' one (same place: the package, or the CDN). */
export const testSchemaReference = (flagSchema: string): string =>
  flagSchema.replace(/flagserve\.schema\.json$/, "flagserve-test.schema.json");

/** Cases for the starter development.yaml; every one passes as written (\`flagserve test\`). */
export function developmentTestFile(schema: string): string {
  return `# yaml-language-server: $schema=${schema}
#
# Test cases for the flags of "development" (the file name says which environment; it is never
# read as one). \`npx flagserve test\` evaluates each case as the server would and checks the
# answer; \`npx flagserve test --coverage\` lists the targeting branches no case reaches, by
# file:line.
# A case expects any of variant, value, reason and errorCode.
tests:
  - name: beta testers get the new checkout
    flag: new-checkout
    context: { targetingKey: user-1, email: ada@example.com }
    expect: { variant: "on", value: true, reason: TARGETING_MATCH }

  - name: everyone else keeps the old one
    flag: new-checkout
    contexts: # a table: the same expectation for each context
      - { targetingKey: user-2, email: bob@example.org }
      - { targetingKey: user-3 }
    expect: { variant: "off", reason: DEFAULT }

  - name: beta testers always see green
    flag: banner-color
    context: { targetingKey: user-1, email: ada@example.com }
    expect: { variant: green, value: "#2da44e", reason: TARGETING_MATCH }

  - name: the rollout keeps each user in one bucket
    flag: banner-color
    context: { targetingKey: user-3 }
    expect: { variant: purple, reason: SPLIT }

  - name: the rollout needs a targetingKey
    flag: banner-color
    context: { email: bob@example.org }
    expect: { errorCode: TARGETING_KEY_MISSING }
`;
}

export function initCommand(): Command {
  return new Command("init")
    .description(
      "write a commented starter: development.yaml and production.yaml with a segment, a boolean and a rollout flag, and development.test.yaml with cases for them",
    )
    .argument("[dir]", "directory to create the environment files in", "flags")
    .option("-f, --force", "overwrite files that already exist")
    .option(
      "--schema <ref>",
      "path or URL for the editors' `$schema` line (default: node_modules/flagserve in this project, else the npm CDN)",
    )
    .addHelpText(
      "after",
      `
Examples:
  $ npx flagserve init                 creates flags/development.yaml and flags/production.yaml
  $ npx flagserve init config/flags    somewhere else
  $ npx flagserve init --force         start over (overwrites those two files)

The files point editors (VS Code with the YAML extension, any yaml-language-server) at
flagserve's JSON Schema for autocompletion: through node_modules/flagserve when flagserve is
installed in the project, else at this version's schema on the npm CDN.`,
    )
    .action(async (dirArg: string, flags: InitFlags) => {
      const schema = flags.schema !== undefined ? { ref: flags.schema, source: "option" as const } : schemaReference(dirArg);
      const files = [
        { file: join(dirArg, "development.yaml"), text: developmentFile(schema.ref) },
        { file: join(dirArg, "production.yaml"), text: productionFile(schema.ref) },
        { file: join(dirArg, "development.test.yaml"), text: developmentTestFile(testSchemaReference(schema.ref)) },
      ];
      const existing = files.filter((f) => existsSync(f.file)).map((f) => displayPath(resolve(f.file)));
      if (existing.length > 0 && !flags.force) {
        err(
          `flagserve init: ${existing.join(" and ")} already exist${existing.length === 1 ? "s" : ""}; nothing written (use --force to overwrite)`,
        );
        process.exitCode = 1;
        return;
      }
      try {
        await mkdir(dirArg, { recursive: true });
        for (const { file, text } of files) await writeFile(file, text, flags.force ? {} : { flag: "wx" });
      } catch (error) {
        err(`flagserve init: cannot write in ${dirArg}: ${(error as Error).message}`);
        process.exitCode = 1;
        return;
      }
      for (const { file } of files) out(`created ${displayPath(resolve(file))}`);
      const why =
        schema.source === "cdn"
          ? " (flagserve is not installed in this project; once it is, you may point it at node_modules/flagserve/schema/flagserve.schema.json)"
          : "";
      out(`editor schema: ${schema.ref}${why}`);
      out("");
      out("next steps:");
      const flagserve = invocation();
      const steps = [
        [`${flagserve} validate ${dirArg}`, "check the files"],
        [`${flagserve} test ${dirArg}`, "run the cases in development.test.yaml"],
        [`${flagserve} ${dirArg}`, "serve them on http://127.0.0.1:8080 and print the keys"],
        [`${flagserve} keys dir ${dirArg}`, "where generated keys and the admin token are kept (outside the project)"],
      ] as const;
      const width = Math.max(...steps.map(([c]) => c.length));
      for (const [cmd, what] of steps) out(`  ${cmd.padEnd(width)}  # ${what}`);
    });
}
