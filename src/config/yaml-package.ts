/**
 * The `yaml` package, loaded the first time it is needed. A file the fast path reads (fast-parse.ts)
 * needs it only when a problem must be located, and an edit of a file (admin, key rotation) only
 * when one is made: loading it costs start-up and `validate` tens of milliseconds for nothing.
 * It is CommonJS (for Node, its `import` and `require` name the same file), so it can be loaded
 * in the middle of a synchronous step, and every caller shares one instance.
 */
import { createRequire } from "node:module";

type YamlPackage = typeof import("yaml");

let loaded: YamlPackage | undefined;

export const yaml = (): YamlPackage => (loaded ??= createRequire(import.meta.url)("yaml") as YamlPackage);
