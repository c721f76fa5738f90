/**
 * flagd's two gRPC services over flagserve's one evaluation path and its store's snapshots:
 *
 * - evaluation (`flagd.evaluation.v1/v2.Service`, RPC mode): each Resolve call is the OFREP
 *   single-flag evaluation (OfrepAnswerer.evaluateFlag: the same snapshot, overrides, context
 *   enrichment, recorder sessions, caching and counts), typed as flagd types it; EventStream
 *   says provider_ready, then configuration_change naming the changed flags, and keep_alive.
 * - sync (`flagd.sync.v1.FlagSyncService`, in-process mode): the environment's flag set as
 *   flagd's JSON (flag-set.ts), again on every change.
 *
 * Every call selects its environment by selector (select.ts) and goes through the fault rules of
 * its route (`flagd-evaluate`, `flagd-events`, `flagd-sync`).
 */
import {
  status,
  type Metadata,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { isEvaluationError, type Evaluation } from "../engine/types.js";
import { ApiError } from "../evaluation/problem.js";
import type { FaultRoute } from "../fixture/fault-rules.js";
import type { FaultInjector } from "../fixture/faults.js";
import type { RequestHeaders } from "../evaluation/context.js";
import type { Metrics } from "../http/metrics.js";
import type { OfrepAnswerer } from "../answers/ofrep-answers.js";
import type { Logger } from "../log/logger.js";
import { isRecord } from "../model/json.js";
import type { JsonValue } from "../model/types.js";
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import { changedFlags, flagSetOf } from "./flag-set.js";
import { fromStruct, toStruct, type ProtoStruct } from "./protocol.js";
import { CallError, SELECTOR_METADATA, type EnvironmentSelector, type Selection } from "./select.js";
import type { FlagdStreamRoute, FlagdStreams } from "./streams.js";

export interface FlagdServiceOptions {
  answerer: Pick<OfrepAnswerer, "evaluateFlag" | "evaluateAll">;
  selector: EnvironmentSelector;
  streams: FlagdStreams;
  logger: Logger;
  faults?: FaultInjector;
  metrics?: Metrics;
  /** Static context values (`--context-value`): sent to in-process providers, which add them to every evaluation. */
  staticContext?: Readonly<Record<string, string>>;
  /** Seconds between two keep_alive events on an EventStream (flagd: 20). */
  keepAliveSeconds?: number;
  /** A stream whose unsent messages exceed this many bytes is ended (a client that stopped reading). */
  maxBufferedBytes?: number;
  /** Most flagd streams one client address may hold open (`--max-streams-per-ip`). */
  maxStreamsPerIp?: number;
}

export const DEFAULT_KEEP_ALIVE_SECONDS = 20;
const DEFAULT_MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** Connections whose last selection is remembered for their next EventStream (see bindConnection). */
const MAX_REMEMBERED_CONNECTIONS = 1024;

/** An HTTP status of a fault rule as the gRPC status a flagd provider reads (Google's API mapping). */
const STATUS_OF: Record<number, status> = {
  400: status.INVALID_ARGUMENT,
  401: status.UNAUTHENTICATED,
  403: status.PERMISSION_DENIED,
  404: status.NOT_FOUND,
  429: status.RESOURCE_EXHAUSTED,
  500: status.INTERNAL,
  502: status.UNAVAILABLE,
  503: status.UNAVAILABLE,
  504: status.DEADLINE_EXCEEDED,
};

/** An evaluation's error code as flagd answers it (flag_evaluator.go's errFormat). */
const EVALUATION_STATUS: Record<string, status> = { PARSE_ERROR: status.DATA_LOSS };

type ValueType = "boolean" | "string" | "float" | "int" | "object";

const typeCheck: Record<ValueType, (value: JsonValue) => boolean> = {
  boolean: (v) => typeof v === "boolean",
  string: (v) => typeof v === "string",
  float: (v) => typeof v === "number",
  int: (v) => typeof v === "number" && Number.isSafeInteger(v),
  object: (v) => isRecord(v),
};

const RESOLVE_METHODS: Record<string, ValueType> = {
  ResolveBoolean: "boolean",
  ResolveString: "string",
  ResolveFloat: "float",
  ResolveInt: "int",
  ResolveObject: "object",
};

/** gRPC metadata read as request headers (the first value of each), for sessions and context enrichment. */
const headersOf = (metadata: Metadata): RequestHeaders => ({
  get(name: string) {
    const values = metadata.get(name.toLowerCase());
    return values.length > 0 ? String(values[0]) : null;
  },
});

const selectorOf = (metadata: Metadata): string | undefined => headersOf(metadata).get(SELECTOR_METADATA) ?? undefined;

/** An error thrown by the shared evaluation path (ApiError) as a gRPC status. */
function callErrorOf(error: unknown): CallError {
  if (error instanceof CallError) return error;
  if (error instanceof ApiError) {
    const code =
      error.status === 404
        ? status.NOT_FOUND
        : error.status === 413
          ? status.RESOURCE_EXHAUSTED
          : error.status < 500
            ? status.INVALID_ARGUMENT
            : status.INTERNAL;
    return new CallError(code, error.data.errorDetails);
  }
  return new CallError(status.INTERNAL, "internal error");
}

/** The value a typed Resolve call answers with: its value as the message field, in range and type. */
function resolveResponse(evaluation: Evaluation, type: ValueType, key: string) {
  if (isEvaluationError(evaluation)) {
    throw new CallError(EVALUATION_STATUS[evaluation.errorCode] ?? status.UNKNOWN, `${evaluation.errorCode}: ${evaluation.errorDetails}`);
  }
  const { value, reason, variant, metadata } = evaluation;
  if (value !== undefined && !typeCheck[type](value)) {
    throw new CallError(
      status.INVALID_ARGUMENT,
      `TYPE_MISMATCH: flag '${key}' is not a ${type} flag (its variant '${variant}' is ${JSON.stringify(value)})`,
    );
  }
  return {
    ...(value !== undefined && { value: type === "object" ? toStruct(value as Record<string, unknown>) : value }),
    reason,
    ...(variant !== undefined && { variant }),
    metadata: toStruct(metadata),
  };
}

/** ResolveAll's item for one evaluation (none for errors and values the protocol cannot hold, as flagd). */
function anyFlag(evaluation: Evaluation) {
  if (isEvaluationError(evaluation)) return undefined;
  const { value, reason, variant, metadata } = evaluation;
  const base = { reason, ...(variant !== undefined && { variant }), metadata: toStruct(metadata) };
  if (value === undefined) return base;
  if (typeof value === "boolean") return { ...base, boolValue: value };
  if (typeof value === "string") return { ...base, stringValue: value };
  if (typeof value === "number") return { ...base, doubleValue: value };
  if (isRecord(value)) return { ...base, objectValue: toStruct(value) };
  return undefined;
}

/** The request's context as the OFREP body text the evaluation path reads (and caches by). */
const bodyOf = (context: ProtoStruct | undefined): string => JSON.stringify({ context: fromStruct(context) });

export function createFlagdServices(options: FlagdServiceOptions) {
  const { answerer, selector, streams, faults, metrics, logger } = options;
  const maxBuffered = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  const syncContext = options.staticContext && Object.keys(options.staticContext).length > 0 ? toStruct(options.staticContext) : undefined;
  const keepAlives = new Set<ServerWritableStream<unknown, unknown>>();

  const countCall = (method: string, code: status) =>
    metrics?.count("flagserve_flagd_calls_total", "flagd gRPC calls by method and status (streams: when they open)", {
      method,
      code: status[code] ?? String(code),
    });

  /** The fault rules of a route for one call: waits out latencies, throws the failure. */
  async function applyFaults(route: FaultRoute, env: string): Promise<void> {
    const decision = faults?.decide(route, env);
    if (!decision) return;
    if (decision.refused) throw new CallError(status.UNAVAILABLE, `injected fault: ${route} refused`);
    const failure = await faults!.settle(decision, route);
    if (failure) throw new CallError(STATUS_OF[failure.status!] ?? status.UNKNOWN, `injected fault: ${failure.status} on ${route}`);
  }

  /** A unary call: its answer, or its error as a status (bad input never throws out of here). */
  function unary<Req, Res>(method: string, answer: (call: ServerUnaryCall<Req, Res>) => Promise<Res>) {
    return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
      answer(call).then(
        (response) => {
          countCall(method, status.OK);
          callback(null, response);
        },
        (error: unknown) => {
          const { code, details } = callErrorOf(error);
          if (code === status.INTERNAL) logger.error(`flagd ${method} failed: ${String(error)}`);
          countCall(method, code);
          callback({ code, details });
        },
      );
    };
  }

  /**
   * EventStreams opened without a selector, by client connection (its peer address): the JS
   * provider sends its selector with every Resolve call but not with the EventStream. Such a
   * stream says provider_ready and keep_alive, which tell nothing about any environment, and is
   * bound to an environment by a Resolve call on the same connection that selected one (the last
   * one before it opened, else the next one): only a client that sent a key there hears about that
   * environment's flags.
   */
  const unbound = new Map<string, Set<(selection: Selection) => void>>();
  /** The selector of each connection's last Resolve call (the most recent connections only; no snapshot kept). */
  const lastSelector = new Map<string, string>();

  function bindConnection(peer: string, selection: Selection): void {
    lastSelector.delete(peer);
    lastSelector.set(peer, selection.selector);
    if (lastSelector.size > MAX_REMEMBERED_CONNECTIONS) lastSelector.delete(lastSelector.keys().next().value!);
    const waiting = unbound.get(peer);
    if (!waiting) return;
    unbound.delete(peer);
    for (const bind of waiting) bind(selection);
  }

  /**
   * Opens a stream: its environment selected (or, for an EventStream without a selector, to be
   * bound later), its route's faults applied, then `start` writes its first messages and returns
   * what to do on each change of its environment. Registered for changes, drops and shutdown.
   */
  function stream<Req>(
    method: string,
    route: FlagdStreamRoute,
    selectionOf: (call: ServerWritableStream<Req, unknown>) => Selection | undefined,
    start: (
      call: ServerWritableStream<Req, unknown>,
      snapshot: EnvironmentSnapshot | undefined,
    ) => (before: EnvironmentSnapshot | undefined, after: EnvironmentSnapshot) => void,
  ) {
    return (call: ServerWritableStream<Req, unknown>) => {
      const ip = call
        .getPeer()
        .replace(/:\d+$/, "")
        .replace(/^\[(.*)\]$/, "$1");
      void (async () => {
        const selection = selectionOf(call);
        const max = options.maxStreamsPerIp;
        if (max !== undefined && streams.from(ip) >= max)
          throw new CallError(status.RESOURCE_EXHAUSTED, `too many open streams from ${ip} (at most ${max})`);
        await applyFaults(route, selection?.snapshot.name ?? "");
        return selection;
      })().then(
        (selection) => {
          if (call.cancelled) return;
          countCall(method, status.OK);
          let ended = false;
          let remove: () => void = () => undefined;
          let env = selection?.snapshot.name;
          let current = selection?.snapshot;
          let selected = selection?.selector;
          const peer = call.getPeer();
          logger.info(`flagd stream opened: ${method} ${env ?? "(bound by the connection's first Resolve call)"} from ${peer}`);
          const end = (code: status, details: string) => {
            if (ended) return;
            ended = true;
            remove();
            keepAlives.delete(call as ServerWritableStream<unknown, unknown>);
            const waiting = unbound.get(peer);
            if (waiting?.delete(bind) && waiting.size === 0) unbound.delete(peer);
            logger.info(`flagd stream closed: ${method} ${env ?? "(unbound)"} from ${peer} (${details})`);
            if (code === status.OK) call.end();
            else call.emit("error", { code, details });
          };
          const bind = (late: Selection) => {
            env = late.snapshot.name;
            selected = late.selector;
            onChange(undefined, (current = late.snapshot));
          };
          const onChange = start(call, current);
          remove = streams.add({
            route,
            ip,
            get env() {
              return env;
            },
            end,
            replaced(after) {
              if (ended || selected === undefined || after === current) return;
              // The selector must still select this environment (a rotated key's grace may be over).
              if (!after || selector.current(selected)?.name !== env) {
                return end(
                  status.UNAUTHENTICATED,
                  "the selector no longer selects this environment (its key was replaced, or it was removed)",
                );
              }
              const before = current;
              onChange(before, (current = after));
              if (call.writableLength > maxBuffered) end(status.RESOURCE_EXHAUSTED, "the client is not reading its stream");
            },
          });
          if (!selection) {
            // A connection that resolved before (a reconnect): bound at once, if its selector still selects.
            const known = lastSelector.get(peer);
            const snapshot = known === undefined ? undefined : selector.current(known);
            if (known !== undefined && snapshot) bind({ selector: known, snapshot });
            else {
              if (!unbound.has(peer)) unbound.set(peer, new Set());
              unbound.get(peer)!.add(bind);
            }
          }
          call.on("cancelled", () => end(status.CANCELLED, "cancelled"));
          call.on("close", () => end(status.CANCELLED, "closed"));
        },
        (error: unknown) => {
          const { code, details } = callErrorOf(error);
          countCall(method, code);
          call.emit("error", { code, details });
        },
      );
    };
  }

  const resolveHandlers: UntypedServiceImplementation = {};
  for (const [method, type] of Object.entries(RESOLVE_METHODS)) {
    resolveHandlers[method] = unary<{ flagKey?: string; context?: ProtoStruct }, unknown>(method, async (call) => {
      const selection = selector.select(selectorOf(call.metadata));
      const { snapshot } = selection;
      bindConnection(call.getPeer(), selection);
      const key = call.request.flagKey ?? "";
      await applyFaults("flagd-evaluate", snapshot.name);
      try {
        return resolveResponse(answerer.evaluateFlag(snapshot, key, bodyOf(call.request.context), headersOf(call.metadata)), type, key);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404)
          throw new CallError(status.NOT_FOUND, `FLAG_NOT_FOUND: flag '${key}' was not found`);
        throw error;
      }
    });
  }

  const evaluation: UntypedServiceImplementation = {
    ...resolveHandlers,
    ResolveAll: unary<{ context?: ProtoStruct }, unknown>("ResolveAll", async (call) => {
      const selection = selector.select(selectorOf(call.metadata));
      const { snapshot } = selection;
      bindConnection(call.getPeer(), selection);
      await applyFaults("flagd-evaluate", snapshot.name);
      const outcomes = answerer.evaluateAll(snapshot, bodyOf(call.request.context), headersOf(call.metadata));
      const flags: Record<string, unknown> = {};
      snapshot.flagKeys.forEach((key, i) => {
        const item = anyFlag(outcomes[i]!);
        if (item) Object.defineProperty(flags, key, { value: item, enumerable: true, writable: true, configurable: true });
      });
      return { flags, metadata: toStruct({}) };
    }),
    EventStream: stream<unknown>(
      "EventStream",
      "flagd-events",
      (call) => {
        const sent = selectorOf(call.metadata);
        return sent === undefined ? undefined : selector.select(sent);
      },
      (call) => {
        call.write({ type: "provider_ready" });
        keepAlives.add(call);
        return (before, after) => {
          if (!before) return; // bound now: nothing sent yet about this environment, so nothing changed
          const message = changeMessage(before, after);
          if (message) call.write(message);
        };
      },
    ),
  };

  /**
   * The `configuration_change` of one replace, made once for every stream that follows it (a
   * reload is one pair of snapshots, whatever the number of streams); null when no flag changed.
   */
  const changeMessages = new WeakMap<EnvironmentSnapshot, { before: EnvironmentSnapshot; message: object | null }>();
  function changeMessage(before: EnvironmentSnapshot, after: EnvironmentSnapshot): object | null {
    let known = changeMessages.get(after);
    if (known?.before !== before) {
      const flags = changedFlags(before, after);
      known = { before, message: Object.keys(flags).length > 0 ? { type: "configuration_change", data: toStruct({ flags }) } : null };
      changeMessages.set(after, known);
    }
    return known.message;
  }

  /** The sync request's selector field (older providers), else the `flagd-selector` metadata. */
  const syncSelection = (call: { request: { selector?: string }; metadata: Metadata }) =>
    selector.select(call.request.selector || selectorOf(call.metadata));

  const sync: UntypedServiceImplementation = {
    SyncFlags: stream<{ selector?: string }>("SyncFlags", "flagd-sync", syncSelection, (call, snapshot) => {
      let sent = flagSetOf(snapshot!).json;
      call.write({ flagConfiguration: sent, ...(syncContext && { syncContext }) });
      return (_before, after) => {
        const next = flagSetOf(after).json;
        if (next === sent) return;
        sent = next;
        call.write({ flagConfiguration: next, ...(syncContext && { syncContext }) });
      };
    }),
    FetchAllFlags: unary<{ selector?: string }, unknown>("FetchAllFlags", async (call) => {
      const { snapshot } = syncSelection(call);
      await applyFaults("flagd-sync", snapshot.name);
      return { flagConfiguration: flagSetOf(snapshot).json };
    }),
    // Server-wide (no environment's data): the static context, as flagd answers it.
    GetMetadata: unary<unknown, unknown>("GetMetadata", async () => ({ metadata: toStruct(options.staticContext ?? {}) })),
  };

  const keepAliveMs = (options.keepAliveSeconds ?? DEFAULT_KEEP_ALIVE_SECONDS) * 1000;
  const timer = setInterval(() => {
    for (const call of keepAlives) call.write({ type: "keep_alive" });
  }, keepAliveMs);
  timer.unref();

  return {
    evaluation,
    sync,
    close() {
      clearInterval(timer);
      streams.close();
    },
  };
}
