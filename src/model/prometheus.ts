/** The Prometheus text format's sample lines, for every module that writes metrics. */

/** A label value longer than this is cut: a client sends some of them. */
export const MAX_LABEL_LENGTH = 100;

export type Labels = Record<string, string>;

/** `a="x",b="y"`, each value cut and escaped. */
export const labelText = (labels: Labels): string =>
  Object.entries(labels)
    .map(([k, v]) => `${k}="${v.slice(0, MAX_LABEL_LENGTH).replace(/["\\\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`))}"`)
    .join(",");

/** One sample line, `name{labels} value`, for collectors that keep their own counts. */
export const formatSample = (name: string, labels: Labels, value: number): string => `${name}{${labelText(labels)}} ${value}`;
