import { writeFileSync, mkdtempSync, mkdirSync } from "node:fs";
import { environmentYaml, startNode, BIN, stop, pause, KEY } from "./lib.js";
const dir = mkdtempSync("/tmp/stall-"); mkdirSync(dir + "/flags"); const file = dir + "/flags/dev.yaml";
const texts = [environmentYaml(10000, "off"), environmentYaml(10000, "on")];
writeFileSync(file, texts[0]);
const server = await startNode(BIN, [dir + "/flags", "--port", "0", "--quiet", "--state-dir", dir + "/state"], "inherit", { nodeArgs: ["--cpu-prof", "--cpu-prof-dir=/tmp/stallprof"] });
await pause(2500);
let max = 0; let running = true;
const probe = (async () => { while (running) { const t = performance.now(); await fetch(server.url + "/ofrep/v1/evaluate/flags/flag-0001", { method: "POST", headers: { "x-api-key": KEY, "content-type": "application/json" }, body: "{}" }); const d = performance.now() - t; if (d > max) { max = d; console.log("new max", d.toFixed(0), "at", new Date().toISOString().slice(17, 23)); } await pause(2); } })();
for (let i = 1; i <= 6; i++) { console.log("edit", i, new Date().toISOString().slice(17, 23)); writeFileSync(file, texts[i % 2]); await pause(700); }
running = false; await probe;
await stop(server.child);
