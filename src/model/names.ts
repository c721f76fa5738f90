/** "Did you mean": the known name nearest to a mistyped one. */

/** Levenshtein distance (names are short: commands, operators, properties). */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/**
 * The candidate nearest to `name` within `maxDistance` edits (ties: the first), if any. By default
 * a third of the name's length, from 1 to 2, so that short names do not match everything.
 */
export function closestName(
  name: string,
  candidates: Iterable<string>,
  maxDistance = Math.min(2, Math.max(1, Math.floor(name.length / 3))),
): string | undefined {
  let best: string | undefined;
  let bestDistance = maxDistance + 1;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}
