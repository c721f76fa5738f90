/**
 * The `yaml` package, loaded the first time it is needed: files are read by js-yaml, and this
 * package only locates a problem or makes an edit (admin, key rotation), so start-up need not
 * pay for it. It is CommonJS (its `import` and `require` name the same file), so it can be loaded
 * in the middle of a synchronous step, and every caller shares one instance.
 */
import { createRequire } from "node:module";

type YamlPackage = typeof import("yaml");

let loaded: YamlPackage | undefined;

export const yaml = (): YamlPackage => (loaded ??= createRequire(import.meta.url)("yaml") as YamlPackage);
