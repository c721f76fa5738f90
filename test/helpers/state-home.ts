/** Removes the run's $XDG_STATE_HOME (vitest.config.ts) once every test file is done. */
import { rm } from "node:fs/promises";
import type { TestProject } from "vitest/node";

export default function setup(project: TestProject): () => Promise<void> {
  const home = project.config.env?.XDG_STATE_HOME;
  return async () => {
    if (home) await rm(home, { recursive: true, force: true });
  };
}
