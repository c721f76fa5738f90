/**
 * An environment as flagd's JSON, what the sync service sends an in-process provider: every
 * flag the server serves as it serves it (overrides applied, flag-set metadata merged into each
 * flag's), its `$ref`s replaced by the segments they name, resolved on the parsed rules as the
 * engine resolves them (nested segments included, which flagd's own `$evaluators` cannot do). So
 * a provider evaluating it in-process answers as the server does.
 *
 * A flag that answers PARSE_ERROR on the server (a problem in its files and no good version) is
 * sent as a flag whose targeting no evaluator knows, which flagd's evaluators answer with
 * PARSE_ERROR too.
 */
import { answeredFlag } from "../changes/diff.js";
import { isOperator, logicEngine } from "../engine/logic.js";
import { resolveRule, type Resolver } from "../engine/resolve.js";
import { canonicalJson, setOwn } from "../model/json.js";
import type { FlagDefinition, JsonObject } from "../model/types.js";
import type { CompiledFlag } from "../engine/types.js";
import type { EnvironmentSnapshot } from "../store/snapshot.js";

export interface FlagSet {
  /** The flag set as flagd's JSON text (`flags`, `metadata`). */
  json: string;
  /** Its length in UTF-8: what a sync stream's message weighs. */
  bytes: number;
  /** Each flag's canonical JSON: what a change event compares (see changedFlags). */
  flags: ReadonlyMap<string, string>;
}

/** A flag as flagd's JSON, its targeting resolved. */
function flagdFlag(
  definition: FlagDefinition,
  resolve: (rule: JsonObject) => unknown,
  setMetadata: EnvironmentSnapshot["config"]["metadata"],
) {
  const { state, variants, defaultVariant, targeting, metadata } = answeredFlag(definition, setMetadata);
  const hasTargeting = targeting !== undefined && Object.keys(targeting).length > 0;
  return { state, variants, defaultVariant, ...(hasTargeting && { targeting: resolve(targeting) }), metadata };
}

/** A flag with a problem in its files, as a flag every evaluator answers PARSE_ERROR for (an operator none has, naming the problem). */
const unusableFlag = (problem: string, metadata: EnvironmentSnapshot["config"]["metadata"]) => ({
  state: "ENABLED",
  variants: { invalid: true },
  defaultVariant: null,
  targeting: { "flagserve:invalid": [problem] },
  metadata,
});

/**
 * Each compiled flag's flagd JSON, as resolved with the segments it was compiled with. A flag
 * that keeps its last good version after an edit broke it (or a segment it uses) is served as
 * the very compiled flag of the snapshot before: its JSON is found here, resolved with the
 * segments of that time, which the new configuration may no longer hold as they were.
 */
const flagdJsonOf = new WeakMap<CompiledFlag, ReturnType<typeof flagdFlag>>();

function build(snapshot: EnvironmentSnapshot): FlagSet {
  const { config } = snapshot;
  const resolver: Resolver = {
    segments: config.segments,
    isOperator: (name) => isOperator(logicEngine, name),
    errors: [],
    done: new Map(),
  };
  const resolve = (rule: JsonObject) => resolveRule(resolver, rule, [], [], { problems: [] });
  const flags: Record<string, unknown> = {};
  const canonical = new Map<string, string>();
  for (const key of Object.keys(config.flags).sort()) {
    const compiled = snapshot.flags.get(key);
    let flag = compiled && flagdJsonOf.get(compiled);
    if (!flag) {
      flag = flagdFlag(config.flags[key]!, resolve, config.metadata);
      if (compiled) flagdJsonOf.set(compiled, flag);
    }
    setOwn(flags, key, flag);
    canonical.set(key, canonicalJson(flag));
  }
  for (const [key, problem] of Object.entries(config.invalidFlags ?? {})) {
    if (Object.hasOwn(config.flags, key)) continue; // served as its last good version
    const flag = unusableFlag(problem, config.metadata);
    setOwn(flags, key, flag);
    canonical.set(key, canonicalJson(flag));
  }
  const json = JSON.stringify({ flags, metadata: config.metadata });
  return { json, bytes: Buffer.byteLength(json), flags: canonical };
}

const built = new WeakMap<EnvironmentSnapshot, FlagSet>();

/** The flag set of a snapshot, built once per snapshot (snapshots are immutable). */
export function flagSetOf(snapshot: EnvironmentSnapshot): FlagSet {
  let set = built.get(snapshot);
  if (!set) built.set(snapshot, (set = build(snapshot)));
  return set;
}

/**
 * The flags whose answers may differ between two versions of an environment, as flagd's
 * `configuration_change` names them: written (new), updated, or deleted. A segment edit counts
 * for every flag that uses it, since the flags are compared with their segments resolved.
 */
export function changedFlags(
  before: EnvironmentSnapshot | undefined,
  after: EnvironmentSnapshot | undefined,
): Record<string, { type: "write" | "update" | "delete" }> {
  const was = before ? flagSetOf(before).flags : new Map<string, string>();
  const now = after ? flagSetOf(after).flags : new Map<string, string>();
  const changed: Record<string, { type: "write" | "update" | "delete" }> = {};
  const mark = (key: string, type: "write" | "update" | "delete") =>
    Object.defineProperty(changed, key, { value: { type }, enumerable: true, writable: true, configurable: true });
  for (const [key, text] of now) {
    const previous = was.get(key);
    if (previous === undefined) mark(key, "write");
    else if (previous !== text) mark(key, "update");
  }
  for (const key of was.keys()) if (!now.has(key)) mark(key, "delete");
  return changed;
}
