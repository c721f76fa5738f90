/**
 * The flagd port (`--flagd-port`): one gRPC server (HTTP/2, no TLS) serving flagd's evaluation
 * service (v1 and v2) and its sync service, on the same host as the HTTP port. Calls read and
 * change nothing but what the HTTP routes do: see services.ts.
 */
import { Server, ServerCredentials } from "@grpc/grpc-js";
import type { FaultInjector } from "../fixture/faults.js";
import type { Metrics } from "../http/metrics.js";
import type { OfrepAnswerer } from "../answers/ofrep-answers.js";
import type { Logger } from "../log/logger.js";
import type { FlagStore } from "../store/store.js";
import { flagSetOf } from "./flag-set.js";
import { EVALUATION_VERSIONS, flagdServices } from "./protocol.js";
import { EnvironmentSelector } from "./select.js";
import { createFlagdServices } from "./services.js";
import type { FlagdStreams } from "./streams.js";

export interface FlagdServerOptions {
  port: number;
  host: string;
  store: FlagStore;
  answerer: Pick<OfrepAnswerer, "evaluateFlag" | "evaluateAll">;
  streams: FlagdStreams;
  logger: Logger;
  /** Environments a selector may name (`--flagd-selector-by-name`); otherwise only keys select. */
  selectorByName?: readonly string[];
  faults?: FaultInjector;
  metrics?: Metrics;
  staticContext?: Readonly<Record<string, string>>;
  /** The largest message accepted (a request's context): larger ones get RESOURCE_EXHAUSTED. */
  maxMessageBytes: number;
  keepAliveSeconds?: number;
  maxStreamsPerIp?: number;
}

export interface FlagdListener {
  /** The port bound (the one asked for, or the free one found for 0). */
  port: number;
  /** `host:port`, as a flagd provider's host and port options take it. */
  address: string;
  close(): Promise<void>;
}

/** Raised when the flagd port cannot be bound. */
export class FlagdPortError extends Error {}

const hostPort = (host: string, port: number): string => `${host.includes(":") ? `[${host}]` : host}:${port}`;

export async function listenFlagd(options: FlagdServerOptions): Promise<FlagdListener> {
  const { evaluation, sync } = flagdServices();
  const services = createFlagdServices({
    answerer: options.answerer,
    selector: new EnvironmentSelector(options.store, options.selectorByName),
    streams: options.streams,
    logger: options.logger,
    faults: options.faults,
    metrics: options.metrics,
    staticContext: options.staticContext,
    keepAliveSeconds: options.keepAliveSeconds,
    maxStreamsPerIp: options.maxStreamsPerIp,
  });
  // Every snapshot's flag set is built as it comes, sync client or not: a flag that keeps its last
  // good version later is then sent as it was resolved (see flag-set.ts).
  const buildFlagSets = () => {
    for (const snapshot of options.store.environments.values()) flagSetOf(snapshot);
  };
  buildFlagSets();
  const stopBuilding = options.store.onReplace(buildFlagSets);
  const server = new Server({ "grpc.max_receive_message_length": options.maxMessageBytes });
  for (const version of EVALUATION_VERSIONS) server.addService(evaluation[version], services.evaluation);
  server.addService(sync, services.sync);
  options.metrics?.gauge("flagserve_flagd_streams", "Open flagd streams (EventStream, SyncFlags)", () => options.streams.size);

  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(hostPort(options.host, options.port), ServerCredentials.createInsecure(), (error, bound) => {
      if (error)
        reject(
          new FlagdPortError(
            `flagd port ${options.port} on ${options.host} is not available (${error.message}); choose another with --flagd-port, or 0 for any free port`,
          ),
        );
      else resolve(bound);
    });
  }).catch((error: unknown) => {
    stopBuilding();
    services.close();
    server.forceShutdown();
    throw error;
  });

  return {
    port,
    address: hostPort(options.host, port),
    close: () =>
      new Promise<void>((resolve) => {
        stopBuilding();
        services.close(); // streams end first, or the shutdown would wait on them
        // In-flight calls get a moment to finish; then the rest are cut.
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
