/** How an admin route answers: AdminErrors as their JSON, plain results as JSON, bodies read as JSON. */
import { getRouterParam, HTTPError, type H3Event } from "h3";
import { readJsonBody } from "../http/body.js";
import { json } from "../http/errors.js";
import { AdminError } from "./errors.js";

/** AdminErrors leave as their JSON, with their headers. */
export function rethrow(error: unknown): never {
  if (!(error instanceof AdminError)) throw error;
  throw new HTTPError({
    status: error.status,
    message: error.errorDetails,
    data: { errorCode: error.errorCode, errorDetails: error.errorDetails, ...error.extra },
    headers: error.headers,
  });
}

/** A handler whose AdminErrors become responses, and whose plain results are sent as JSON. */
export const handle =
  (fn: (event: H3Event) => unknown) =>
  async (event: H3Event): Promise<unknown> => {
    try {
      const result = await fn(event);
      return result instanceof Response ? result : json(event, result);
    } catch (error) {
      rethrow(error);
    }
  };

/** A route parameter as written by the client (`encodeURIComponent`), `/` in a flag key included. */
export const param = (event: H3Event, name: string): string =>
  (getRouterParam(event, name, { decode: true }) ?? "").replace(/%2f/gi, "/").replace(/%5c/gi, "\\");

/** The JSON body; malformed JSON is a 400 INVALID_REQUEST. */
export async function body(event: H3Event, limit: number): Promise<unknown> {
  try {
    return await readJsonBody(event, limit);
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === 400) throw new AdminError(400, "INVALID_REQUEST", (error as Error).message);
    throw error;
  }
}
