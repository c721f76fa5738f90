/**
 * `--public`: the URLs other devices on the network can use, chosen as listhen chooses them
 * (external, non-link-local addresses), and a QR code of the first one for a phone's camera.
 * Not listhen's own getURLs(): with `public` set it lists every interface's address even for a
 * server bound to loopback or to one address, where other devices cannot reach those.
 */
import { networkInterfaces } from "node:os";
import { isLoopbackAddress } from "../http/hosts.js";

const WILDCARDS = new Set(["0.0.0.0", "::", "[::]", ""]);

/** The URLs the server is reachable at from other machines, given the URL it listens on. */
export function networkUrls(url: string): string[] {
  const parsed = new URL(url);
  const host = parsed.hostname;
  if (!WILDCARDS.has(host)) {
    return host === "localhost" || isLoopbackAddress(host) ? [] : [parsed.origin];
  }
  const ipv6 = host.includes(":");
  const addresses = new Set<string>();
  for (const details of Object.values(networkInterfaces())) {
    for (const d of details ?? []) {
      if (d.internal || d.mac === "00:00:00:00:00:00" || d.address.startsWith("fe80::") || d.address.startsWith("169.254.")) continue;
      if (d.family === "IPv6" && !ipv6) continue;
      addresses.add(d.family === "IPv6" ? `[${d.address}]` : d.address);
    }
  }
  return [...addresses].sort().map((address) => `${parsed.protocol}//${address}:${parsed.port}`);
}

/** A QR code drawn with Unicode half blocks (listhen's renderer), or "" if it cannot be drawn. */
export async function qrCode(text: string): Promise<string> {
  try {
    const { renderUnicodeCompact } = await import("uqr");
    return renderUnicodeCompact(text);
  } catch {
    return "";
  }
}
