/**
 * Which environment a flagd call reads. flagd's protocols carry no credential, only a selector:
 * the `flagd-selector` header (gRPC metadata from the RPC-mode providers, and from newer ones in
 * sync mode; an interceptor's header with Connect and gRPC-Web) or the sync request's `selector`
 * field. A selector holding an environment's API key selects that
 * environment, as the key does on the HTTP routes; an environment's name selects it only for the
 * environments opted in with `--flagd-selector-by-name`.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { EnvironmentSnapshot } from "../store/snapshot.js";
import type { FlagStore } from "../store/store.js";

export const SELECTOR_HEADER = "flagd-selector";

const WHAT_TO_SEND = "set the provider's selector to the environment's API key (flagd-selector)";

export interface Selection {
  snapshot: EnvironmentSnapshot;
  /** The selector as sent: what keeps selecting this environment after a reload (see stillSelects). */
  selector: string;
}

export class EnvironmentSelector {
  readonly #byName: ReadonlySet<string>;
  constructor(
    private readonly store: FlagStore,
    byName: Iterable<string> = [],
  ) {
    this.#byName = new Set(byName);
  }

  /** The environment `selector` names, else a ConnectError (UNAUTHENTICATED) saying what to send. */
  select(selector: string | undefined): Selection {
    const text = selector?.trim() ?? "";
    if (text === "") throw new ConnectError(`no selector: ${WHAT_TO_SEND}`, Code.Unauthenticated);
    const snapshot = this.current(text);
    if (!snapshot) throw new ConnectError(`the selector matches no environment: ${WHAT_TO_SEND}`, Code.Unauthenticated);
    return { snapshot, selector: text };
  }

  /** The environment a selector selects now (undefined: none any more, e.g. after a key rotation's grace). */
  current(selector: string): EnvironmentSnapshot | undefined {
    const byKey = this.store.authenticate(selector);
    if (byKey) return byKey;
    return this.#byName.has(selector) ? this.store.get(selector) : undefined;
  }
}
