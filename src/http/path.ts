/** Path parameters as clients write them. */
import { getRouterParam, type H3Event } from "h3";

/**
 * What follows `prefix` in the raw request path, decoded: clients send `encodeURIComponent(value)`,
 * so `/` in a value arrives as `%2F`, which the router leaves encoded while decoding the rest.
 * With malformed percent-encoding: the router's parameter `name`, else the raw text.
 */
export function decodedPathTail(event: H3Event, prefix: string, name: string): string {
  const raw = new URL(event.req.url).pathname.slice(prefix.length);
  return decodedSegment(raw) ?? getRouterParam(event, name) ?? raw;
}

/** A path segment as the client meant it (`encodeURIComponent(value)`), or undefined when it is not valid percent-encoding. */
export function decodedSegment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}
