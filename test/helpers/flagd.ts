/**
 * Clients of the flagd port through each of its doors: gRPC (HTTP/2), gRPC-Web and Connect over
 * HTTP/1.1 (JSON and binary, as browsers' clients send them) and Connect over HTTP/2. All are
 * @connectrpc/connect-node's transports over the services generated from proto/, so a test can
 * run the same calls through every door. And SyncFlags through @grpc/grpc-js, the flagd
 * providers' own client, for what depends on how it uses its connection.
 */
import { create, fromBinary, toBinary, type DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { credentials, makeGenericClientConstructor, Metadata, type ClientReadableStream } from "@grpc/grpc-js";
import { Service as EvaluationV1 } from "../../src/flagd/generated/flagd/evaluation/v1/evaluation_pb.js";
import { Service as EvaluationV2 } from "../../src/flagd/generated/flagd/evaluation/v2/evaluation_pb.js";
import {
  FlagSyncService,
  SyncFlagsRequestSchema,
  SyncFlagsResponseSchema,
  type SyncFlagsResponse,
} from "../../src/flagd/generated/flagd/sync/v1/sync_pb.js";

export { EvaluationV1, EvaluationV2, FlagSyncService };

export type Door = "gRPC" | "gRPC-Web (HTTP/1.1, binary)" | "Connect (HTTP/1.1, JSON)" | "Connect (HTTP/2, binary)";

export const DOORS: readonly Door[] = ["gRPC", "gRPC-Web (HTTP/1.1, binary)", "Connect (HTTP/1.1, JSON)", "Connect (HTTP/2, binary)"];

export function transport(door: Door, port: number, host = "127.0.0.1"): Transport {
  const baseUrl = `http://${host}:${port}`;
  switch (door) {
    case "gRPC":
      return createGrpcTransport({ baseUrl });
    case "gRPC-Web (HTTP/1.1, binary)":
      return createGrpcWebTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true });
    case "Connect (HTTP/1.1, JSON)":
      return createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false });
    case "Connect (HTTP/2, binary)":
      return createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true });
  }
}

export interface FlagdClients {
  v1: Client<typeof EvaluationV1>;
  v2: Client<typeof EvaluationV2>;
  sync: Client<typeof FlagSyncService>;
}

export function flagdClients(door: Door, port: number): FlagdClients {
  const t = transport(door, port);
  const client = <S extends DescService>(service: S) => createClient(service, t);
  return { v1: client(EvaluationV1), v2: client(EvaluationV2), sync: client(FlagSyncService) };
}

/** Call options sending the selector (and any other headers). */
export const withSelector = (selector: string, headers: Record<string, string> = {}) => ({
  headers: { "flagd-selector": selector, ...headers },
});

const GrpcJsSync = makeGenericClientConstructor(
  {
    SyncFlags: {
      path: "/flagd.sync.v1.FlagSyncService/SyncFlags",
      requestStream: false,
      responseStream: true,
      requestSerialize: (message: { selector: string }) =>
        Buffer.from(toBinary(SyncFlagsRequestSchema, create(SyncFlagsRequestSchema, message))),
      requestDeserialize: (bytes: Buffer) => bytes,
      responseSerialize: () => Buffer.alloc(0),
      responseDeserialize: (bytes: Buffer) => fromBinary(SyncFlagsResponseSchema, bytes),
    },
  },
  "FlagSyncService",
);

/**
 * A @grpc/grpc-js channel to the flagd port, as the flagd providers open one: all its calls share
 * one HTTP/2 connection (so do other channels to the same address: grpc-js pools connections).
 */
export function grpcJsSync(port: number) {
  const client = new GrpcJsSync(`127.0.0.1:${port}`, credentials.createInsecure());
  const call = client as unknown as { SyncFlags(request: object, metadata: Metadata): ClientReadableStream<SyncFlagsResponse> };
  return {
    /** A SyncFlags call sending `selector` in the flagd-selector header, as the in-process provider does. */
    syncFlags(selector: string): ClientReadableStream<SyncFlagsResponse> {
      const metadata = new Metadata();
      metadata.set("flagd-selector", selector);
      return call.SyncFlags({}, metadata);
    },
    close: () => client.close(),
  };
}
