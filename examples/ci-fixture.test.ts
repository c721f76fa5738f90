// A test that starts flagserve in-process as its flag server (vitest; flagserve installed in the
// project). Run it in the clone with: npx vitest run examples/ci-fixture.test.ts
import { createFlagServer, type FlagServer } from "flagserve";
import { afterAll, beforeAll, expect, it } from "vitest";

let server: FlagServer;

beforeAll(async () => {
  server = await createFlagServer({
    config: {
      environments: {
        test: {
          apiKey: "test-key-123456",
          flags: { "new-checkout": { variants: { on: true, off: false }, defaultVariant: "off" } },
        },
      },
    },
  }); // on a free port: server.url
});
afterAll(() => server.close());

// What the app's OFREP provider would ask, given baseUrl server.url and this key.
const newCheckout = async () => {
  const response = await fetch(`${server.url}/ofrep/v1/evaluate/flags/new-checkout`, {
    method: "POST",
    headers: { "X-API-Key": "test-key-123456" },
    body: JSON.stringify({ context: { targetingKey: "user-1" } }),
  });
  return (await response.json()).value;
};

it("serves the file's default, then what the test sets", async () => {
  expect(await newCheckout()).toBe(false);
  await server.overrides.set("test", "new-checkout", { variant: "on" });
  expect(await newCheckout()).toBe(true);
});
