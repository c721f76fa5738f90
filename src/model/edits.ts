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
}

/** How `mapping` was made, when its maker recorded it; undefined when it must be walked whole. */
export const editOf = (mapping: unknown): Edit | undefined =>
  typeof mapping === "object" && mapping !== null ? edits.get(mapping) : undefined;
