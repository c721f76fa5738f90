// An app's flags from flagserve, through the OpenFeature server SDK and its OFREP provider.
// In the clone, with `npx flagserve` running: node examples/openfeature-node.mjs
import { OpenFeature } from "@openfeature/server-sdk";
import { OFREPProvider } from "@openfeature/ofrep-provider";

const baseUrl = process.env.FLAGSERVE_URL ?? "http://127.0.0.1:8080";

async function main() {
  // The bundled example's development environment has the fixed key dev-example-key.
  await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl, headers: [["X-API-Key", "dev-example-key"]] }));
  const client = OpenFeature.getClient();
  // new-checkout is on for the beta-testers segment: emails ending in @example.com.
  for (const email of ["ada@example.com", "bob@elsewhere.org"]) {
    const details = await client.getBooleanDetails("new-checkout", false, { targetingKey: email, email });
    console.log(`new-checkout for ${email}: ${details.value} (${details.reason}, variant ${details.variant})`);
  }
  // A flag the server does not have: the default given here.
  const missing = await client.getBooleanDetails("no-such-flag", false, { targetingKey: "user-1" });
  console.log(`no-such-flag: ${missing.value} (${missing.errorCode})`);
  await OpenFeature.close();
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
