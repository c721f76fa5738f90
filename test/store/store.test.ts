/** FlagStore's key lookup, as a table: current keys, the accepted-key memo, and a replaced key's grace. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { compileEnvironment } from "../../src/engine/compile.js";
import { createSnapshot, type EnvironmentSnapshot } from "../../src/store/snapshot.js";
import { FlagStore } from "../../src/store/store.js";
import { env } from "../engine/helpers.js";

const snapshot = (name: string, apiKey: string): EnvironmentSnapshot => {
  const config = { ...env({ flags: { f: { variants: { on: true }, defaultVariant: "on" } } }), name };
  return createSnapshot(config, compileEnvironment(config).flags, apiKey);
};

const T = 1_700_000_000_000;
afterEach(() => void vi.useRealTimers());

type Step = (store: FlagStore) => void;
const serve =
  (...pairs: [string, string][]): Step =>
  (store) =>
    store.replace(pairs.map(([name, key]) => snapshot(name, key)));
const retire =
  (env: string, key: string, graceMs: number): Step =>
  (store) =>
    store.retireKey(env, key, graceMs);
const ask =
  (key: string): Step =>
  (store) =>
    void store.authenticate(key);
const at =
  (ms: number): Step =>
  () =>
    void vi.setSystemTime(ms);

/** [what, steps before the lookup, key looked up, environment expected (undefined: refused)]. */
const cases: [string, Step[], string, string | undefined][] = [
  ["a current key", [serve(["dev", "dev-key-0123456789"])], "dev-key-0123456789", "dev"],
  [
    "each environment by its own key",
    [serve(["dev", "dev-key-0123456789"], ["prod", "prod-key-0123456789"])],
    "prod-key-0123456789",
    "prod",
  ],
  ["an unknown key", [serve(["dev", "dev-key-0123456789"])], "nope-key-0123456789", undefined],
  ["a key differing in case", [serve(["dev", "dev-key-0123456789"])], "DEV-KEY-0123456789", undefined],
  ["a prefix of a key", [serve(["dev", "dev-key-0123456789"])], "dev-key-012345678", undefined],
  ["an accepted key, asked again", [serve(["dev", "dev-key-0123456789"]), ask("dev-key-0123456789")], "dev-key-0123456789", "dev"],
  // The memo is emptied by every replace: a key accepted before is not accepted once replaced.
  [
    "an accepted key after its environment got another",
    [serve(["dev", "old-key-0123456789"]), ask("old-key-0123456789"), serve(["dev", "new-key-0123456789"])],
    "old-key-0123456789",
    undefined,
  ],
  [
    "an accepted key after its environment was removed",
    [serve(["dev", "dev-key-0123456789"], ["qa", "qa-key-0123456789"]), ask("qa-key-0123456789"), serve(["dev", "dev-key-0123456789"])],
    "qa-key-0123456789",
    undefined,
  ],
  [
    "the new key after a replace",
    [serve(["dev", "old-key-0123456789"]), ask("old-key-0123456789"), serve(["dev", "new-key-0123456789"])],
    "new-key-0123456789",
    "dev",
  ],
  [
    "a replaced key within its grace",
    [at(T), serve(["dev", "new-key-0123456789"]), retire("dev", "old-key-0123456789", 60_000), at(T + 59_999)],
    "old-key-0123456789",
    "dev",
  ],
  [
    "a replaced key once its grace is over",
    [at(T), serve(["dev", "new-key-0123456789"]), retire("dev", "old-key-0123456789", 60_000), at(T + 60_000)],
    "old-key-0123456789",
    undefined,
  ],
  [
    "a replaced key with no grace",
    [serve(["dev", "new-key-0123456789"]), retire("dev", "old-key-0123456789", 0)],
    "old-key-0123456789",
    undefined,
  ],
  [
    "a replaced key in grace sees its environment's latest snapshot",
    [
      at(T),
      serve(["dev", "new-key-0123456789"]),
      retire("dev", "old-key-0123456789", 60_000),
      serve(["dev", "new-key-0123456789"], ["qa", "qa-key-0123456789"]),
    ],
    "old-key-0123456789",
    "dev",
  ],
  [
    "a replaced key whose environment is gone",
    [at(T), serve(["dev", "new-key-0123456789"]), retire("dev", "old-key-0123456789", 60_000), serve(["qa", "qa-key-0123456789"])],
    "old-key-0123456789",
    undefined,
  ],
  [
    "a key asked once its grace was over, then in another second",
    [
      at(T),
      serve(["dev", "new-key-0123456789"]),
      retire("dev", "old-key-0123456789", 1000),
      at(T + 1000),
      ask("old-key-0123456789"),
      at(T),
    ],
    "old-key-0123456789",
    undefined,
  ],
];

describe("FlagStore.authenticate", () => {
  it.each(cases)("%s", (_what, steps, key, expected) => {
    vi.useFakeTimers({ toFake: ["Date"], now: T });
    const store = new FlagStore();
    for (const step of steps) step(store);
    const found = store.authenticate(key);
    expect(found?.name).toBe(expected);
    // Once accepted, the same key finds the same snapshot object.
    if (found) expect(store.authenticate(key)).toBe(found);
  });

  it("answers a stream token with its environment, and nothing else", () => {
    const store = new FlagStore();
    const dev = snapshot("dev", "dev-key-0123456789");
    store.replace([dev]);
    expect(store.authenticateStreamToken(dev.streamToken)).toBe(dev);
    expect(store.authenticateStreamToken("dev-key-0123456789")).toBeUndefined();
    expect(store.authenticate(dev.streamToken)).toBeUndefined();
  });
});
