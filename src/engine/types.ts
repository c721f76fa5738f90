import type { JsonValue, Metadata } from "../model/types.js";

/** Targeting compiled once per load: a function of the evaluation data. */
export type CompiledRule = (data: Record<string, unknown>) => unknown;

/** A flag ready to evaluate: immutable, targeting compiled, metadata merged. */
export interface CompiledFlag {
  key: string;
  state: "ENABLED" | "DISABLED";
  variants: Record<string, JsonValue>;
  defaultVariant: string | null;
  /** Absent when the flag has no (or empty) targeting. */
  rule?: CompiledRule;
  /** Flag-set metadata with the flag's own metadata merged over it. */
  metadata: Metadata;
  /**
   * True when the result cannot depend on `$flagd.timestamp` (see clock.ts), so an answer for a
   * context stays right for as long as the flag is loaded. Absent: it may depend on it.
   */
  clockFree?: boolean;
}

export type Reason = "STATIC" | "TARGETING_MATCH" | "SPLIT" | "DEFAULT" | "DISABLED";
export type EvaluationErrorCode = "TARGETING_KEY_MISSING" | "GENERAL" | "PARSE_ERROR";

/** Successes are shared, frozen objects (one per flag, reason and variant: see outcomes.ts). */
export type Evaluation =
  | { key: string; reason: Reason; variant?: string; value?: JsonValue; metadata: Metadata }
  | { key: string; errorCode: EvaluationErrorCode; errorDetails: string; metadata: Metadata };

export const isEvaluationError = (e: Evaluation): e is Extract<Evaluation, { errorCode: EvaluationErrorCode }> => "errorCode" in e;
