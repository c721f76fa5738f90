/**
 * Which entries of a mapping an edit replaced. The loader shares every unchanged part of a new
 * parse with the last one (config/share.ts), so a stage that worked through the last mapping can
 * tell what is new by identity; but finding the new entries that way still walks every entry, and
 * a 10 000-flag file has 10 000 of them. Where the maker of a new mapping knows which entries it
 * replaced, it records them here, and a stage that kept its result for `from` works through the
 * `changed` entries alone. A mapping without a record is walked whole: the record only saves work.
 */

/** `mapping` has the keys of `from`, in the same order, and the very same values except under `changed`. */
export interface Edit {
  readonly from: object;
  readonly changed: readonly string[];
}

const edits = new WeakMap<object, Edit>();

/**
 * Records how `mapping` was made from `from` (its maker vouches for the interface's promise).
 * `from`'s own record is dropped: the stages look one edit back, and a chain of records would keep
 * every earlier version of a 10 000-flag map alive.
 */
export function recordEdit(mapping: object, from: object, changed: readonly string[]): void {
  edits.delete(from);
  edits.set(mapping, { from, changed });
  const keys = keyLists.get(from);
  if (keys !== undefined) keyLists.set(mapping, keys);
}

/** How `mapping` was made, when its maker recorded it; undefined when it must be walked whole. */
export const editOf = (mapping: unknown): Edit | undefined =>
  typeof mapping === "object" && mapping !== null ? edits.get(mapping) : undefined;

const keyLists = new WeakMap<object, readonly string[]>();

/**
 * `Object.keys(mapping)`, listed once for a chain of edits: a recorded edit has its `from`'s keys
 * in the same order, so it is given their list. Listing the keys of a 10 000-entry mapping takes
 * about 1.7 ms (V8 sorts a dictionary's keys into their order each time), and an edit of one flag
 * would do it three times: in the worker, and twice on the serving thread. Only for mappings
 * that are not changed once made, as every mapping here is once a stage has passed it on.
 */
export function keysOf(mapping: object): readonly string[] {
  let keys = keyLists.get(mapping);
  if (keys === undefined) keyLists.set(mapping, (keys = Object.keys(mapping)));
  return keys;
}
