/**
 * flagd's services over flagserve's one evaluation path and its store's snapshots, as one Connect
 * router: each call is served alike whether it came as gRPC, gRPC-Web or Connect (server.ts).
 *
 * - evaluation (`flagd.evaluation.v1/v2.Service`, RPC mode and the web provider): each Resolve
 *   call is the OFREP single-flag evaluation (OfrepAnswerer.evaluateFlag: the same snapshot,
 *   overrides, context enrichment, recorder sessions, caching and counts), typed as flagd types
 *   it; EventStream says provider_ready, then configuration_change naming the changed flags, and
 *   keep_alive.
 * - sync (`flagd.sync.v1.FlagSyncService`, in-process mode): the environment's flag set as
 *   flagd's JSON (flag-set.ts), again on every change.
 *
 * Every call selects its environment by selector (select.ts) and goes through the fault rules of
 * its route (`flagd-evaluate`, `flagd-events`, `flagd-sync`).
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextKey, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { isEvaluationError, type Evaluation } from "../engine/types.js";
import { ApiError } from "../evaluation/problem.js";
import type { FaultRoute } from "../fixture/fault-rules.js";
import type { FaultInjector } from "../fixture/faults.js";
import type { Metrics } from "../http/metrics.js";
import type { OfrepAnswerer } from "../answers/ofrep-answers.js";
import type { Logger } from "../log/logger.js";
import { isRecord, setOwn } from "../model/json.js";
import type { JsonValue } from "../model/types.js";
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import { changedFlags, flagSetOf } from "./flag-set.js";
import { Service as EvaluationV1 } from "./generated/flagd/evaluation/v1/evaluation_pb.js";
import { Service as EvaluationV2 } from "./generated/flagd/evaluation/v2/evaluation_pb.js";
import { FlagSyncService } from "./generated/flagd/sync/v1/sync_pb.js";
import { Outbox } from "./outbox.js";
import { SELECTOR_HEADER, type EnvironmentSelector, type Selection } from "./select.js";
import type { FlagdStreamRoute, FlagdStreams } from "./streams.js";

/** What a call knows of the connection it came on (server.ts sets it for every request). */
export interface Connection {
  /** The client's address, without its port. */
  ip: string;
  /** `address:port`, for the log. */
  peer: string;
  /**
   * The HTTP/2 connection (session) the call came on; undefined over HTTP/1.1. What binds an
   * EventStream opened without a selector (see bindConnection).
   */
  session: object | undefined;
  /** Ends the call at once, dropping what is queued for it: its HTTP/2 stream reset, or its HTTP/1.1 connection. */
  cutOff(): void;
}

export const CONNECTION = createContextKey<Connection | undefined>(undefined, { description: "the flagd call's connection" });

export interface FlagdServiceOptions {
  answerer: Pick<OfrepAnswerer, "evaluateFlag" | "evaluateAll">;
  selector: EnvironmentSelector;
  streams: FlagdStreams;
  logger: Logger;
  faults?: FaultInjector;
  metrics?: Metrics;
  /** Static context values (`--context-value`): sent to in-process providers, which add them to every evaluation. */
  staticContext?: Readonly<Record<string, string>>;
  /** Most flagd streams one client address may hold open (`--max-streams-per-ip`). */
  maxStreamsPerIp?: number;
}

/** Seconds between two keep_alive events on an EventStream, as flagd's. */
const KEEP_ALIVE_SECONDS = 20;
/**
 * The most a stream's client may leave untaken before it is cut off (a client that stopped
 * reading): 4 MiB, the largest message a gRPC client takes by default (grpc-js and grpc-go
 * alike), so one whole flag set always fits. An SSE stream's bound is smaller (its events are
 * small); the rule is the same.
 */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** An HTTP status of a fault rule as the gRPC status a flagd provider reads (Google's API mapping). */
const STATUS_OF: Record<number, Code> = {
  400: Code.InvalidArgument,
  401: Code.Unauthenticated,
  403: Code.PermissionDenied,
  404: Code.NotFound,
  429: Code.ResourceExhausted,
  500: Code.Internal,
  502: Code.Unavailable,
  503: Code.Unavailable,
  504: Code.DeadlineExceeded,
};

/** An evaluation's error code as flagd answers it (flag_evaluator.go's errFormat). */
const EVALUATION_STATUS: Record<string, Code> = { PARSE_ERROR: Code.DataLoss };

/** A status as gRPC names it (`UNAUTHENTICATED`, `CANCELLED`), for the metrics. */
const statusName = (code: Code | 0): string =>
  code === 0 ? "OK" : code === Code.Canceled ? "CANCELLED" : Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();

/** The selector a call sent: the `flagd-selector` header (gRPC metadata is headers). */
const selectorOf = (ctx: HandlerContext): string | undefined => ctx.requestHeader.get(SELECTOR_HEADER) ?? undefined;

/** An error thrown by the shared evaluation path (ApiError), or any other, as a status. */
function callErrorOf(error: unknown): ConnectError {
  if (error instanceof ConnectError) return error;
  if (error instanceof ApiError) {
    const code =
      error.status === 404
        ? Code.NotFound
        : error.status === 413
          ? Code.ResourceExhausted
          : error.status < 500
            ? Code.InvalidArgument
            : Code.Internal;
    return new ConnectError(error.data.errorDetails, code);
  }
  return new ConnectError("internal error", Code.Internal);
}

/** The value a typed Resolve call answers with: its value as the message field, in range and type. */
function resolveResponse<V>(evaluation: Evaluation, type: string, key: string, valueOf: (value: JsonValue) => V | undefined) {
  if (isEvaluationError(evaluation)) {
    throw new ConnectError(`${evaluation.errorCode}: ${evaluation.errorDetails}`, EVALUATION_STATUS[evaluation.errorCode] ?? Code.Unknown);
  }
  const { value, reason, variant, metadata } = evaluation;
  const typed = value === undefined ? undefined : valueOf(value);
  if (value !== undefined && typed === undefined) {
    throw new ConnectError(
      `TYPE_MISMATCH: flag '${key}' is not a ${type} flag (its variant '${variant}' is ${JSON.stringify(value)})`,
      Code.InvalidArgument,
    );
  }
  return {
    ...(typed !== undefined && { value: typed }),
    reason,
    ...(variant !== undefined && { variant }),
    metadata: metadata as JsonObject,
  };
}

/** ResolveAll's item for one evaluation (none for errors and values the protocol cannot hold, as flagd). */
function anyFlag(evaluation: Evaluation) {
  if (isEvaluationError(evaluation)) return undefined;
  const { value, reason, variant, metadata } = evaluation;
  const base = { reason, ...(variant !== undefined && { variant }), metadata: metadata as JsonObject };
  if (value === undefined) return base;
  if (typeof value === "boolean") return { ...base, value: { case: "boolValue" as const, value } };
  if (typeof value === "string") return { ...base, value: { case: "stringValue" as const, value } };
  if (typeof value === "number") return { ...base, value: { case: "doubleValue" as const, value } };
  if (isRecord(value)) return { ...base, value: { case: "objectValue" as const, value: value as JsonObject } };
  return undefined;
}

/** The request's context as the OFREP body text the evaluation path reads (and caches by). */
const bodyOf = (context: JsonObject | undefined): string => JSON.stringify({ context: context ?? {} });

interface ResolveRequest {
  flagKey: string;
  context?: JsonObject;
}

interface EventMessage {
  type: string;
  data?: JsonObject;
}

/** A call without the connection server.ts sets (never, when served by it): no binding, nothing to cut. */
const UNKNOWN_CONNECTION: Connection = { ip: "unknown", peer: "unknown", session: undefined, cutOff: () => undefined };

/** The routes of flagd's services, and what ends their streams and timers. */
export function createFlagdServices(options: FlagdServiceOptions) {
  const { answerer, selector, streams, faults, metrics, logger } = options;
  const syncContext = options.staticContext && Object.keys(options.staticContext).length > 0 ? { ...options.staticContext } : undefined;
  const keepAlives = new Set<() => void>();

  const countCall = (method: string, code: Code | 0) =>
    metrics?.count("flagserve_flagd_calls_total", "flagd calls by method and status (streams: when they open)", {
      method,
      code: statusName(code),
    });

  /** The fault rules of a route for one call: waits out latencies, throws the failure. */
  async function applyFaults(route: FaultRoute, env: string): Promise<void> {
    const decision = faults?.decide(route, env);
    if (!decision) return;
    if (decision.refused) throw new ConnectError(`injected fault: ${route} refused`, Code.Unavailable);
    const failure = await faults!.settle(decision, route);
    if (failure) throw new ConnectError(`injected fault: ${failure.status} on ${route}`, STATUS_OF[failure.status!] ?? Code.Unknown);
  }

  /** A unary call: its answer, or its error as a status (bad input never throws anything else out of here). */
  async function unary<T>(method: string, answer: () => T | Promise<T>): Promise<T> {
    try {
      const response = await answer();
      countCall(method, 0);
      return response;
    } catch (error) {
      const failure = callErrorOf(error);
      if (!(error instanceof ConnectError || error instanceof ApiError)) logger.error(`flagd ${method} failed: ${String(error)}`);
      countCall(method, failure.code);
      throw failure;
    }
  }

  /**
   * EventStreams opened without a selector, by HTTP/2 connection: flagd's RPC provider sends its
   * selector with every Resolve call but not with its EventStream. Such a stream says
   * provider_ready and keep_alive, which tell nothing about any environment, and is bound to an
   * environment by a Resolve call on the same connection that selected one (the last one before
   * it opened, else the next one): only a client that sent a key on that very connection hears
   * about that environment's flags. Keyed by the connection object, never by an address, and
   * forgotten with it.
   */
  const connections = new WeakMap<object, { selector?: string; waiting: Set<(selection: Selection) => void> }>();
  const connectionState = (session: object) => {
    let state = connections.get(session);
    if (!state) connections.set(session, (state = { waiting: new Set() }));
    return state;
  };

  function bindConnection(connection: Connection, selection: Selection): void {
    if (connection.session === undefined) return;
    const state = connectionState(connection.session);
    state.selector = selection.selector;
    const waiting = [...state.waiting];
    state.waiting.clear();
    for (const bind of waiting) bind(selection);
  }

  /** A Resolve call's environment: selected by its header, its connection bound to it. */
  function selectResolve(ctx: HandlerContext): EnvironmentSnapshot {
    const selection = selector.select(selectorOf(ctx));
    bindConnection(ctx.values.get(CONNECTION) ?? UNKNOWN_CONNECTION, selection);
    return selection.snapshot;
  }

  /**
   * A server stream: its environment selected (or, for an EventStream without a selector on an
   * HTTP/2 connection, to be bound later), its route's faults applied, then `start` sends its
   * first messages and returns what to do on each change of its environment. Registered for
   * changes, drops, revocations and shutdown; cut off when its client leaves more than
   * MAX_BUFFERED_BYTES untaken.
   */
  function stream<Req, Res>(
    method: string,
    route: FlagdStreamRoute,
    selectionOf: (request: Req, ctx: HandlerContext, connection: Connection) => Selection | undefined,
    start: (
      send: (message: Res, bytes: number) => void,
      snapshot: EnvironmentSnapshot | undefined,
    ) => (before: EnvironmentSnapshot | undefined, after: EnvironmentSnapshot) => void,
    /** What the stream says every keep-alive period, if anything. */
    keepAliveMessage?: Res,
  ) {
    return async function* (request: Req, ctx: HandlerContext): AsyncGenerator<Res> {
      const connection = ctx.values.get(CONNECTION) ?? UNKNOWN_CONNECTION;
      const { ip, peer } = connection;
      let selection: Selection | undefined;
      try {
        selection = selectionOf(request, ctx, connection);
        await applyFaults(route, selection?.snapshot.name ?? "");
        // Counted here, with nothing awaited before streams.add: streams opened together (waiting
        // out a latency, or read at once from one connection) are each counted before the next checks.
        const max = options.maxStreamsPerIp;
        if (max !== undefined && streams.from(ip) >= max)
          throw new ConnectError(`too many open streams from ${ip} (at most ${max})`, Code.ResourceExhausted);
      } catch (error) {
        const failure = callErrorOf(error);
        countCall(method, failure.code);
        throw failure;
      }
      if (ctx.signal.aborted) return;
      countCall(method, 0);

      const outbox = new Outbox<Res>();
      let ended = false;
      let remove: () => void = () => undefined;
      let env = selection?.snapshot.name;
      let current = selection?.snapshot;
      let selected = selection?.selector;
      logger.info(`flagd stream opened: ${method} ${env ?? "(bound by the connection's Resolve calls)"} from ${peer}`);
      const end = (code: Code | 0, details: string) => {
        if (ended) return;
        ended = true;
        remove();
        keepAlives.delete(keepAlive);
        if (connection.session !== undefined) connections.get(connection.session)?.waiting.delete(bind);
        logger.info(`flagd stream closed: ${method} ${env ?? "(unbound)"} from ${peer} (${details})`);
        outbox.end(code === 0 ? null : new ConnectError(details, code));
      };
      const send = (message: Res, bytes: number) => {
        if (ended) return;
        if (outbox.backlog <= MAX_BUFFERED_BYTES) return outbox.push(message, bytes);
        logger.warn(`flagd stream dropped: ${method} ${env ?? "(unbound)"} from ${peer} left ${outbox.backlog} bytes unread; stream reset`);
        end(Code.ResourceExhausted, "the client is not reading its stream");
        connection.cutOff();
      };
      const keepAlive = () => send(keepAliveMessage!, 20);
      const bind = (late: Selection) => {
        env = late.snapshot.name;
        selected = late.selector;
        onChange(undefined, (current = late.snapshot));
      };
      const onChange = start(send, current);
      if (keepAliveMessage) keepAlives.add(keepAlive);
      remove = streams.add({
        route,
        ip,
        get env() {
          return env;
        },
        end,
        replaced(after) {
          if (ended || selected === undefined) return;
          // The selector must still select this environment (a rotated key's grace may be over, or revoked).
          if (!after || selector.current(selected)?.name !== env) {
            return end(Code.Unauthenticated, "the selector no longer selects this environment (its key was replaced, or it was removed)");
          }
          if (after === current) return;
          const before = current;
          onChange(before, (current = after));
        },
      });
      if (!selection && connection.session !== undefined) {
        // A connection that resolved before (a reconnect): bound at once, if its selector still selects.
        const state = connectionState(connection.session);
        const snapshot = state.selector === undefined ? undefined : selector.current(state.selector);
        if (state.selector !== undefined && snapshot) bind({ selector: state.selector, snapshot });
        else state.waiting.add(bind);
      }
      ctx.signal.addEventListener("abort", () => end(Code.Canceled, "closed"), { once: true });
      try {
        yield* outbox.messages();
      } finally {
        end(Code.Canceled, "closed");
      }
    };
  }

  /**
   * The `configuration_change` of one replace, made once for every stream that follows it (a
   * reload is one pair of snapshots, whatever the number of streams); null when no flag changed.
   */
  const changeMessages = new WeakMap<EnvironmentSnapshot, { before: EnvironmentSnapshot; change: [EventMessage, number] | null }>();
  function changeMessage(before: EnvironmentSnapshot, after: EnvironmentSnapshot): [EventMessage, number] | null {
    let known = changeMessages.get(after);
    if (known?.before !== before) {
      const flags = changedFlags(before, after);
      const message = { type: "configuration_change", data: { flags } };
      known = { before, change: Object.keys(flags).length > 0 ? [message, JSON.stringify(message).length] : null };
      changeMessages.set(after, known);
    }
    return known.change;
  }

  function resolver<V>(method: string, type: string, valueOf: (value: JsonValue) => V | undefined) {
    return (request: ResolveRequest, ctx: HandlerContext) =>
      unary(method, async () => {
        const snapshot = selectResolve(ctx);
        const key = request.flagKey;
        await applyFaults("flagd-evaluate", snapshot.name);
        try {
          return resolveResponse(answerer.evaluateFlag(snapshot, key, bodyOf(request.context), ctx.requestHeader), type, key, valueOf);
        } catch (error) {
          if (error instanceof ApiError && error.status === 404)
            throw new ConnectError(`FLAG_NOT_FOUND: flag '${key}' was not found`, Code.NotFound);
          throw error;
        }
      });
  }

  // One implementation for both versions: their messages differ only in which fields are optional.
  const evaluation = {
    resolveBoolean: resolver("ResolveBoolean", "boolean", (v) => (typeof v === "boolean" ? v : undefined)),
    resolveString: resolver("ResolveString", "string", (v) => (typeof v === "string" ? v : undefined)),
    resolveFloat: resolver("ResolveFloat", "float", (v) => (typeof v === "number" ? v : undefined)),
    resolveInt: resolver("ResolveInt", "int", (v) => (typeof v === "number" && Number.isSafeInteger(v) ? BigInt(v) : undefined)),
    resolveObject: resolver("ResolveObject", "object", (v) => (isRecord(v) ? (v as JsonObject) : undefined)),
    resolveAll: (request: { context?: JsonObject }, ctx: HandlerContext) =>
      unary("ResolveAll", async () => {
        const snapshot = selectResolve(ctx);
        await applyFaults("flagd-evaluate", snapshot.name);
        const outcomes = answerer.evaluateAll(snapshot, bodyOf(request.context), ctx.requestHeader);
        const flags: Record<string, NonNullable<ReturnType<typeof anyFlag>>> = {};
        snapshot.flagKeys.forEach((key, i) => {
          const item = anyFlag(outcomes[i]!);
          if (item) setOwn(flags, key, item);
        });
        return { flags, metadata: {} };
      }),
    eventStream: stream<unknown, EventMessage>(
      "EventStream",
      "flagd-events",
      (_request, ctx, connection) => {
        const sent = selectorOf(ctx);
        // Over HTTP/1.1 there is no connection to bind it by: no selector, no stream.
        return sent === undefined && connection.session !== undefined ? undefined : selector.select(sent);
      },
      (send) => {
        send({ type: "provider_ready" }, 24);
        return (before, after) => {
          if (!before) return; // bound now: nothing sent yet about this environment, so nothing changed
          const change = changeMessage(before, after);
          if (change) send(...change);
        };
      },
      { type: "keep_alive" },
    ),
  };

  /** The sync request's selector field (older providers), else the `flagd-selector` header. */
  const syncSelection = (request: { selector: string }, ctx: HandlerContext) => selector.select(request.selector || selectorOf(ctx));

  const sync = {
    syncFlags: stream<{ selector: string }, { flagConfiguration: string; syncContext?: JsonObject }>(
      "SyncFlags",
      "flagd-sync",
      syncSelection,
      (send, snapshot) => {
        let sent = flagSetOf(snapshot!);
        send({ flagConfiguration: sent.json, syncContext }, sent.bytes);
        return (_before, after) => {
          const next = flagSetOf(after);
          if (next.json === sent.json) return;
          sent = next;
          send({ flagConfiguration: next.json, syncContext }, next.bytes);
        };
      },
    ),
    fetchAllFlags: (request: { selector: string }, ctx: HandlerContext) =>
      unary("FetchAllFlags", async () => {
        const { snapshot } = syncSelection(request, ctx);
        await applyFaults("flagd-sync", snapshot.name);
        return { flagConfiguration: flagSetOf(snapshot).json };
      }),
    // Server-wide (no environment's data): the static context, as flagd answers it.
    getMetadata: () => unary("GetMetadata", () => ({ metadata: { ...options.staticContext } })),
  };

  const timer = setInterval(() => {
    for (const keepAlive of keepAlives) keepAlive();
  }, KEEP_ALIVE_SECONDS * 1000);
  timer.unref();

  return {
    routes(router: ConnectRouter): void {
      router.service(EvaluationV1, evaluation);
      router.service(EvaluationV2, evaluation);
      router.service(FlagSyncService, sync);
    },
    close() {
      clearInterval(timer);
      streams.close();
    },
  };
}
