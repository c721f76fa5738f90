/**
 * Which Host names a request may carry to see what this server serves in detail (the admin API
 * and page, and the details of /readyz and /metrics): loopback, the listen address and the
 * configured names. Another name is what a DNS-rebinding page sends.
 */
import { BlockList, isIPv6 } from "node:net";
import { networkInterfaces } from "node:os";

const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]", ""]);

/** URL with the wildcard host replaced, so it can be opened locally (and the self-signed certificate covers it). */
export function localUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === "0.0.0.0") parsed.hostname = "127.0.0.1";
  else if (parsed.hostname === "[::]") parsed.hostname = "[::1]";
  return parsed.origin;
}

/** The host name of a Host header (or URL host): lower case, no port, IPv6 without brackets. */
export function hostName(host: string): string {
  const value = host.trim().toLowerCase();
  if (value.startsWith("[")) return value.slice(1, value.indexOf("]") > 0 ? value.indexOf("]") : undefined);
  const colon = value.lastIndexOf(":");
  return colon > 0 && value.indexOf(":") === colon ? value.slice(0, colon) : value;
}

/**
 * Loopback names (localhost, *.localhost, a loopback address in any spelling: an address is no
 * name a page can rebind), the listen address (for a wildcard such as 0.0.0.0 with --public: the
 * machine's interface addresses, as of start-up) and the configured public hosts.
 */
export function allowedHosts(listenHost: string, extra: readonly string[] = []): (name: string) => boolean {
  const names = new Set(["localhost"]);
  if (!WILDCARD_HOSTS.has(listenHost)) names.add(hostName(listenHost));
  else for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) names.add(a.address.toLowerCase());
  for (const host of extra) names.add(hostName(host));
  return (name) => names.has(name) || name.endsWith(".localhost") || isLoopbackAddress(name);
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/**
 * Whether an IP address is a loopback one: 127.0.0.0/8, ::1, and 127/8 mapped into IPv6
 * (`::ffff:127.0.0.1`, as a dual-stack socket reports an IPv4 peer). Brackets are allowed.
 */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  try {
    return LOOPBACK.check(bare, isIPv6(bare) ? "ipv6" : "ipv4");
  } catch {
    return false; // not an IP address
  }
}
