/** Environments given as data (the programmatic API's `{ environments }`, and `update`): a source whose documents are values. */
import { INLINE_ID, type ConfigSource, type SourceLoad } from "./source.js";

export class InlineSource implements ConfigSource {
  readonly id = INLINE_ID;
  readonly kind = "inline";

  /** `environments`: environment name -> environment document (read again at every reload). */
  constructor(private readonly environments: Record<string, unknown>) {}

  read(): Promise<SourceLoad> {
    const environments = Object.entries(this.environments).map(([name, value]) => ({
      name,
      documents: [{ file: `<inline:${name}>`, value }],
    }));
    return Promise.resolve({ id: this.id, documents: [], environments, problems: [] });
  }

  async watch(): Promise<void> {}

  async close(): Promise<void> {}
}
