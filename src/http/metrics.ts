/** Prometheus counters. No flag data: routes, statuses, client SDKs, environments. */

const CLIENT_HEADERS = ["x-service-sdk", "x-service-runtime", "x-service-os", "x-service-features"] as const;

type Labels = Record<string, string>;

const labelText = (labels: Labels) =>
  Object.entries(labels)
    .map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`)).slice(0, 100)}"`)
    .join(",");

export class Metrics {
  #counters = new Map<string, { help: string; values: Map<string, number> }>();
  #gauges = new Map<string, { help: string; read: () => number }>();

  count(name: string, help: string, labels: Labels): void {
    let counter = this.#counters.get(name);
    if (!counter) this.#counters.set(name, (counter = { help, values: new Map() }));
    const key = labelText(labels);
    counter.values.set(key, (counter.values.get(key) ?? 0) + 1);
  }

  gauge(name: string, help: string, read: () => number): void {
    this.#gauges.set(name, { help, read });
  }

  /** Counts the optional client identification headers a request carried. */
  countClient(headers: Headers): void {
    for (const header of CLIENT_HEADERS) {
      const value = headers.get(header);
      if (value) this.count("flagserve_client_requests_total", "Requests by client identification header", { header, value });
    }
  }

  render(): string {
    const lines: string[] = [];
    for (const [name, { help, values }] of this.#counters) {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
      for (const [labels, value] of values) lines.push(`${name}{${labels}} ${value}`);
    }
    for (const [name, { help, read }] of this.#gauges) {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${read()}`);
    }
    return `${lines.join("\n")}\n`;
  }
}
