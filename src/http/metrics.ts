/** Prometheus counters. No flag data: routes, statuses, client SDKs, environments. */
import { labelText, MAX_LABEL_LENGTH, type Labels } from "../model/prometheus.js";

/** Client identification: the OFREP providers' `X-Service-*` and the Flipswitch SDKs' `X-Flipswitch-*`. */
export const CLIENT_HEADERS = [
  "x-service-sdk",
  "x-service-runtime",
  "x-service-os",
  "x-service-features",
  "x-flipswitch-sdk",
  "x-flipswitch-runtime",
  "x-flipswitch-os",
  "x-flipswitch-features",
] as const;

/** The start every name in CLIENT_HEADERS has, in any case. */
const CLIENT_HEADER_START = /^x-(?:service|flipswitch)-/i;
const X = 0x78;

/**
 * Whether a Node request's raw header list (name, value, name, ...) may hold a client
 * identification header. Most requests carry none: one look at each name costs less than
 * asking for each of CLIENT_HEADERS by name.
 */
export function mayIdentifyClient(rawHeaders: readonly string[]): boolean {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    // The shortest client header is `x-service-os`; `| 0x20` lower-cases the X.
    if (name.length >= 12 && (name.charCodeAt(0) | 0x20) === X && CLIENT_HEADER_START.test(name)) return true;
  }
  return false;
}

/**
 * Distinct values kept per client header; later ones are counted as "other". Anyone can send
 * these headers without a key, so without a bound every new value would be a new series.
 */
export const MAX_CLIENT_VALUES = 50;
export const OTHER_VALUE = "other";

/** A counter's value for one label set: held by whoever counts it often (see `counter`). */
interface Count {
  value: number;
}

export class Metrics {
  #counters = new Map<string, { help: string; values: Map<string, Count> }>();
  #gauges = new Map<string, { help: string; read: () => number }>();
  /** The values of each client header given a series of their own. */
  #clientValues = new Map<string, Set<string>>();
  /** labelText per label set seen (bounded like the series themselves): counting runs on every request. */
  #labelTexts = new Map<string, string>();
  #collectors: (() => string[])[] = [];

  count(name: string, help: string, labels: Labels): void {
    const values = this.#values(name, help);
    let id = "";
    for (const label in labels) id += `${label}\0${labels[label]}\0`;
    let key = this.#labelTexts.get(id);
    if (key === undefined) this.#labelTexts.set(id, (key = labelText(labels)));
    this.#count(values, key).value++;
  }

  /** `count` for one fixed label set, resolved once: for counting on every request. */
  counter(name: string, help: string, labels: Labels): () => void {
    const count = this.#count(this.#values(name, help), labelText(labels));
    return () => void count.value++;
  }

  #count(values: Map<string, Count>, key: string): Count {
    let count = values.get(key);
    if (!count) values.set(key, (count = { value: 0 }));
    return count;
  }

  #values(name: string, help: string): Map<string, Count> {
    let counter = this.#counters.get(name);
    if (!counter) this.#counters.set(name, (counter = { help, values: new Map() }));
    return counter.values;
  }

  gauge(name: string, help: string, read: () => number): void {
    this.#gauges.set(name, { help, read });
  }

  /** Adds lines (HELP, TYPE and samples) produced when /metrics is read: the series naming flags, variants and environments. */
  collect(lines: () => string[]): void {
    this.#collectors.push(lines);
  }

  /** Counts the optional client identification headers a request carried. */
  countClient(headers: Pick<Headers, "get">): void {
    for (const header of CLIENT_HEADERS) {
      const value = headers.get(header)?.slice(0, MAX_LABEL_LENGTH);
      if (value)
        this.count("flagserve_client_requests_total", "Requests by client identification header", {
          header,
          value: this.#bounded(header, value),
        });
    }
  }

  /** The value itself while the header has fewer than MAX_CLIENT_VALUES, else "other". */
  #bounded(header: string, value: string): string {
    let seen = this.#clientValues.get(header);
    if (!seen) this.#clientValues.set(header, (seen = new Set()));
    if (seen.has(value)) return value;
    if (seen.size >= MAX_CLIENT_VALUES) return OTHER_VALUE;
    seen.add(value);
    return value;
  }

  /** details false: without the collected series (they name flags, variants and environments). */
  render({ details = true }: { details?: boolean } = {}): string {
    const lines: string[] = [];
    for (const [name, { help, values }] of this.#counters) {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
      for (const [labels, { value }] of values) if (value > 0) lines.push(`${name}{${labels}} ${value}`);
    }
    for (const [name, { help, read }] of this.#gauges) {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${read()}`);
    }
    if (details) for (const collector of this.#collectors) lines.push(...collector());
    return `${lines.join("\n")}\n`;
  }
}
