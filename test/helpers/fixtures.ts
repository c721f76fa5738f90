/** Flag files used across the end-to-end tests (one case per row of the OFREP acceptance list). */

export const TEST_KEY = "test-key-0123456789";
export const OTHER_KEY = "other-key-0123456789";

export const OFREP_FIXTURE = `# Fixture for the OFREP end-to-end tests
apiKey: ${TEST_KEY}
metadata:
  flagSetId: fixture
  version: 3
segments:
  premium:
    "==": [{ var: plan }, premium]
flags:
  bool-flag:
    state: ENABLED
    variants: { "on": true, "off": false }
    defaultVariant: "on"
  string-flag:
    variants: { blue: blue, red: red }
    defaultVariant: blue
  int-flag:
    variants: { answer: 42, zero: 0 }
    defaultVariant: answer
  float-flag:
    variants: { pi: 3.14, e: 2.718 }
    defaultVariant: pi
  object-flag:
    variants:
      nested: { a: 1, b: { c: true } }
    defaultVariant: nested
  targeted-flag:
    variants: { vip: true, default: false }
    defaultVariant: default
    targeting:
      if: [{ $ref: premium }, vip, null]
  split-flag:
    variants: { a: a, b: b }
    defaultVariant: a
    targeting:
      fractional: [[a, 50], [b, 50]]
  disabled-flag:
    state: DISABLED
    variants: { "on": true, "off": false }
    defaultVariant: "on"
  default-flag:
    variants: { "on": true, "off": false }
    defaultVariant: null
  meta-flag:
    variants: { "on": true }
    defaultVariant: "on"
    metadata: { team: ecommerce, version: 4, beta: true }
  bad-target-flag:
    variants: { "on": true, "off": false }
    defaultVariant: "off"
    targeting:
      if: [{ "==": [{ var: plan }, broken] }, nonexistent, null]
`;

export const OTHER_FIXTURE = `apiKey: ${OTHER_KEY}
flags:
  bool-flag:
    variants: { "on": true, "off": false }
    defaultVariant: "off"
`;
