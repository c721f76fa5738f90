/** "Did you mean": the known name nearest to a mistyped one. */
import { closestMatch } from "leven";

/**
 * The candidate nearest to `name` within `maxDistance` edits (ties: the first), if any. By default
 * a third of the name's length, from 1 to 2, so that short names do not match everything.
 */
export const closestName = (
  name: string,
  candidates: Iterable<string>,
  maxDistance = Math.min(2, Math.max(1, Math.floor(name.length / 3))),
): string | undefined => closestMatch(name, [...candidates], { maxDistance });
