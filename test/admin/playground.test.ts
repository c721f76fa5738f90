/**
 * The playground's route (`POST /api/v1/admin/environments/{env}/evaluate`): the OFREP
 * evaluate-all answer as the environment's key gets it, and for each flag whose targeting ran,
 * the branches it took, outermost first, evaluated with the same (enriched) context.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAdminFixture, type AdminFixture } from "./helpers.js";
import { tempDir } from "../helpers/files.js";

const YAML = `apiKey: dev-key-0123456789
segments:
  staff: { ends_with: [{ var: email }, "@example.com"] }
flags:
  search:
    variants: { classic: c, vector: v, hybrid: h }
    defaultVariant: classic
    targeting:
      if:
        - { $ref: staff }
        - vector
        - if:
            - { "==": [{ var: region }, eu] }
            - fractional:
                - [classic, 50]
                - [hybrid, 50]
  gate:
    variants: { "on": true, "off": false }
    defaultVariant: "off"
    targeting: { if: [{ "==": [{ var: plan }, pro] }, "on"] }
  plain:
    variants: { x: 1 }
    defaultVariant: x
`;

let fixture: AdminFixture;
beforeAll(async () => {
  const dir = await tempDir();
  await dir.write("flags/dev.yaml", YAML);
  // A context value the server adds to every request: the playground's evaluation sees it too.
  fixture = await startAdminFixture({ contextValues: { region: "eu" } }, dir);
});
afterAll(() => fixture?.close());

interface Played {
  flags: {
    key: string;
    value?: unknown;
    variant?: string;
    reason?: string;
    errorCode?: string;
    matched?: { kind: string; label: string; path: unknown[] }[];
  }[];
}

async function play(context: object): Promise<Map<string, Played["flags"][number]>> {
  const response = await fixture.admin("/environments/dev/evaluate", { method: "POST", body: context });
  expect(response.status).toBe(200);
  const body = (await response.json()) as Played;
  return new Map(body.flags.map((f) => [f.key, f]));
}

describe("the playground says which branches matched", () => {
  it("an if branch, or the else and the bucket inside it, outermost first", async () => {
    const staff = await play({ targetingKey: "u1", email: "ann@example.com" });
    expect(staff.get("search")).toMatchObject({ variant: "vector", reason: "TARGETING_MATCH" });
    expect(staff.get("search")!.matched).toEqual([{ kind: "if", label: 'if branch 1 ("vector")', path: ["targeting", "if", 1] }]);

    // region comes from the server's --context-value, not from the body.
    const other = await play({ targetingKey: "u1", email: "bob@example.org" });
    const search = other.get("search")!;
    expect(search.reason).toBe("SPLIT");
    expect(search.matched!.map((b) => b.kind)).toEqual(["else", "if", "bucket"]);
    expect(search.matched![0]!.path).toEqual(["targeting", "if", 2]);
    expect(search.matched![1]!.path).toEqual(["targeting", "if", 2, "if", 1]);
    expect(search.matched![2]).toMatchObject({
      label: `fractional bucket "${search.variant}" (weight 50)`,
      path: ["targeting", "if", 2, "if", 1, "fractional", search.variant === "classic" ? 0 : 1],
    });
  });

  it("no condition met: the if's unwritten else; no targeting, or an error: nothing", async () => {
    const flags = await play({ targetingKey: "u1", plan: "free" });
    expect(flags.get("gate")).toMatchObject({ variant: "off", reason: "DEFAULT" });
    expect(flags.get("gate")!.matched).toEqual([{ kind: "no-else", label: "else (none written: null)", path: ["targeting"] }]);
    expect(flags.get("plain")).toMatchObject({ reason: "STATIC" });
    expect(flags.get("plain")!.matched).toBeUndefined();

    const noKey = await play({ email: "bob@example.org" });
    expect(noKey.get("search")).toMatchObject({ errorCode: "TARGETING_KEY_MISSING" });
    expect(noKey.get("search")!.matched).toBeUndefined();
  });

  it("an overridden flag answers as overridden, with no branch of its file's targeting", async () => {
    await fixture.server.overrides.set("dev", "gate", { variant: "on" });
    const flags = await play({ targetingKey: "u1", plan: "free" });
    expect(flags.get("gate")).toMatchObject({ variant: "on", reason: "STATIC" });
    expect(flags.get("gate")!.matched).toBeUndefined();
    await fixture.server.overrides.clear("dev", "gate");
  });
});
