/** A source says what it reads; a spec's kind is read in one place (sourceKindOf). */
import { describe, expect, it } from "vitest";
import { createSource, InlineSource, INLINE_ID, sourceKindOf } from "../../src/sources/index.js";

/** [spec, its kind]. */
const specs: [string, "files" | "url" | "inline"][] = [
  ["flags.yaml", "files"],
  ["./config/", "files"],
  ["/etc/flagserve", "files"],
  ["http://127.0.0.1:8080/flags.yaml", "url"],
  ["HTTPS://example.com/flags", "url"],
  ["ftp://example.com/flags.yaml", "files"],
  ["http:relative", "files"],
  [INLINE_ID, "inline"],
];

describe("sourceKindOf and createSource", () => {
  it.each(specs)("%s", async (spec, kind) => {
    expect(sourceKindOf(spec)).toBe(kind);
    if (kind === "inline") return;
    const source = createSource(spec);
    expect([source.id, source.kind]).toEqual([spec, kind]);
    await source.close();
  });

  it("says inline for environments given as data", () => {
    expect(new InlineSource({}).kind).toBe("inline");
  });
});
