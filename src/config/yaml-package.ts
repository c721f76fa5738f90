/**
 * The `yaml` package, loaded the first time it is needed: files are read by js-yaml, and this one
 * only locates a problem or makes an edit, so start-up need not pay for it. CommonJS (its `import`
 * and `require` name one file), it loads inside a synchronous step, and every caller shares one instance.
 */
import { createRequire } from "node:module";

type YamlPackage = typeof import("yaml");

let loaded: YamlPackage | undefined;

export const yaml = (): YamlPackage => (loaded ??= createRequire(import.meta.url)("yaml") as YamlPackage);
