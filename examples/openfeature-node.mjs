// Evaluate flags from a Node.js app with the OpenFeature server SDK and its OFREP provider.
//
// In the flagserve clone (`npm install` has installed both packages), with `npx flagserve`
// serving the bundled example in another terminal:
//
//   node examples/openfeature-node.mjs
//
// In your own project: `npm install @openfeature/server-sdk @openfeature/ofrep-provider`,
// copy this file, and point FLAGSERVE_URL at your server if it is not on :8080.
import { OpenFeature } from "@openfeature/server-sdk";
import { OFREPProvider } from "@openfeature/ofrep-provider";

const baseUrl = process.env.FLAGSERVE_URL ?? "http://127.0.0.1:8080";

async function main() {
  // The bundled example's development environment has the fixed key dev-example-key.
  await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl, headers: [["X-API-Key", "dev-example-key"]] }));
  const client = OpenFeature.getClient();

  // new-checkout is on for the beta-testers segment: emails ending in @example.com.
  for (const context of [
    { targetingKey: "user-1", email: "ada@example.com" },
    { targetingKey: "user-2", email: "bob@elsewhere.org" },
  ]) {
    const details = await client.getBooleanDetails("new-checkout", false, context);
    console.log(`new-checkout for ${context.email}: ${details.value} (${details.reason}, variant ${details.variant})`);
  }

  // banner-color is a percentage rollout: the same targetingKey always gets the same colour.
  const color = await client.getStringValue("banner-color", "#000000", { targetingKey: "user-1" });
  console.log(`banner-color for user-1: ${color}`);

  // A flag the server does not have: the SDK returns the default given here.
  const missing = await client.getBooleanDetails("no-such-flag", false, { targetingKey: "user-1" });
  console.log(`no-such-flag: ${missing.value} (${missing.errorCode})`);

  await OpenFeature.close();
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
