#!/usr/bin/env node
// Runs the compiled CLI (built into dist/ by `npm install`); no TypeScript is compiled at start-up.
import { main } from "../dist/cli/main.js";

await main();
