import { writeFileSync, mkdtempSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { environmentYaml } from "./lib.js";
const { loadConfig, LoadMemo } = await import("../dist/config/index.js");
const { applyLoad } = await import("../dist/changes/reload.js");
const { FlagStore } = await import("../dist/store/store.js");
const n = Number(process.argv[2] ?? 10000);
const dir = mkdtempSync("/tmp/prof-"); const file = dir + "/dev.yaml";
const texts = [environmentYaml(n, "off"), environmentYaml(n, "on")];
writeFileSync(file, texts[0]);
const memo = new LoadMemo();
const store = new FlagStore();
const ctx = { store, hub: { publish() {}, closeStreamsOf: () => 0, removeEnvironment() {} }, logger: { info() {}, warn() {}, error() {} }, stateDir: dir + "/state", keyGraceSeconds: 0 };
await applyLoad(await loadConfig(file, { memo }), ctx);
const session = new Session(); session.connect();
await session.post("Profiler.enable"); 
const EDITS = 12;
for (let i = 1; i <= EDITS; i++) {
  writeFileSync(file, texts[i % 2]);
  await new Promise((r) => setTimeout(r, 30));
  if (i === 3) await session.post("Profiler.start");
  const load = await loadConfig(file, { memo, offThread: true });
  await applyLoad(load, ctx);
  void store.get("dev").configEtag;
}
const { profile } = await session.post("Profiler.stop");
writeFileSync("/tmp/main.cpuprofile", JSON.stringify(profile));
