/**
 * IP addresses in one spelling, for what compares or counts them: an IPv4 address mapped into
 * IPv6 (`::ffff:127.0.0.1`, as a dual-stack socket reports an IPv4 peer, or `::ffff:7f00:1`) is
 * written as that IPv4 address. Not in http/hosts.ts: the commands load proof.ts, and none of
 * the HTTP layer (test/architecture.test.ts).
 */
import { isIPv6 } from "node:net";

/** The eight groups of an IPv6 address, as numbers; undefined when it is not one. */
export function ipv6Groups(address: string): number[] | undefined {
  const bare = address.replace(/%.*$/, ""); // a zone (fe80::1%eth0) is no part of the address
  if (!isIPv6(bare)) return undefined;
  // The URL parser writes it canonically: lower case, an embedded IPv4 address as two groups.
  const canonical = new URL(`http://[${bare}]`).hostname.slice(1, -1);
  const [head = "", tail] = canonical.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return groups.map((group) => parseInt(group, 16));
}

/** An IPv4-mapped IPv6 address (::ffff:0:0/96) as its IPv4 address; anything else as it is. */
export function unmappedAddress(address: string): string {
  const groups = ipv6Groups(address);
  if (groups === undefined || !groups.slice(0, 5).every((g) => g === 0) || groups[5] !== 0xffff) return address;
  return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".");
}
