/** The evaluation engine: compile an environment's targeting once, then evaluate flags. */
export { compileEnvironment, type CompiledEnvironment, type CompileError, type JsonPath } from "./compile.js";
export { evaluate, evaluatorFor } from "./evaluate.js";
export { contextAttributes } from "./context.js";
export { createLogicEngine } from "./logic.js";
export { fractional, fractionalValue, bucketingHash, bucketOf, parseDistribution, pickVariant } from "./fractional.js";
export { semVer, parseVersion } from "./semver.js";
export { murmur3Utf8Concat } from "./murmur.js";
export { readsClock } from "./clock.js";
export { startsWith, endsWith } from "./strings.js";
export { TargetingKeyMissingError, TargetingParseError } from "./errors.js";
export {
  isEvaluationError,
  type CompiledFlag,
  type CompiledRule,
  type Evaluation,
  type EvaluationErrorCode,
  type Reason,
} from "./types.js";
