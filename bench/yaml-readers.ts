/**
 * The two YAML readers side by side, in one process: the `yaml` package (a Document with every
 * node's position, then its value) and js-yaml (parse.ts's readYaml: the nesting check, then
 * js-yaml with YAML's core schema), which is why js-yaml reads every document and the `yaml`
 * package only locates problems. The files are the shared fixture (bench/lib.ts, block-style YAML
 * as a person writes it) at 100, 1 000 and 10 000 flags. Each run reads the same text with both,
 * the reader that goes first alternating; medians.
 *
 *   npm run bench:yaml
 *   npm run bench:yaml -- --runs 3
 */
import { parseArgs } from "node:util";
import { parseDocument } from "yaml";
import { readYaml } from "../src/config/parse.js";
import { benchYaml, header, median, printRatios, printTable, ratio } from "./lib.js";

const { values } = parseArgs({ options: { runs: { type: "string", default: "7" } } });
const runs = Number(values.runs);
const SIZES = [100, 1_000, 10_000];

const timed = (read: () => unknown): number => {
  const t0 = performance.now();
  if (read() === undefined) throw new Error("the reader declined the file");
  return performance.now() - t0;
};

header(`the shared fixture at ${SIZES.join(" / ")} flags, median of ${runs} run(s)`);
const rows: string[][] = [];
const ratios: [string, string][] = [];
for (const count of SIZES) {
  const text = benchYaml(count);
  const withYaml = () => parseDocument(text, { uniqueKeys: false, merge: true }).toJS();
  const withJsYaml = () => {
    const read = readYaml("/bench.yaml", text);
    return "value" in read ? read.value : undefined;
  };
  withYaml(); // warm-up: both readers' code compiled before anything is timed
  withJsYaml();
  const yamlMs: number[] = [];
  const jsYamlMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) (yamlMs.push(timed(withYaml)), jsYamlMs.push(timed(withJsYaml)));
    else (jsYamlMs.push(timed(withJsYaml)), yamlMs.push(timed(withYaml)));
  }
  const a = median(yamlMs);
  const b = median(jsYamlMs);
  rows.push([`${count} flags (${(text.length / 1e6).toFixed(2)} MB)`, a.toFixed(1), b.toFixed(1), ratio(a, b)]);
  ratios.push([`${count} flags`, ratio(a, b)]);
}
printTable(["file", "yaml package, ms", "js-yaml, ms", "ratio"], rows);
printRatios("bench:yaml (yaml package / js-yaml)", ratios);
