/** The look at raw header names that spares most requests the client-header lookups. */
import { describe, expect, it } from "vitest";
import { CLIENT_HEADERS, mayIdentifyClient } from "../../src/http/metrics.js";

describe("mayIdentifyClient", () => {
  it("finds every client identification header, in any case and position", () => {
    for (const name of CLIENT_HEADERS) {
      expect(mayIdentifyClient(["Host", "localhost", name, "v"])).toBe(true);
      expect(mayIdentifyClient([name.toUpperCase(), "v"])).toBe(true);
    }
  });

  it("passes requests without one", () => {
    expect(mayIdentifyClient([])).toBe(false);
    expect(mayIdentifyClient(["Host", "localhost", "X-API-Key", "x-service-sdk", "x-servicex", "v", "x-flipswitch", "v"])).toBe(false);
  });
});
