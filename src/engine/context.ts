/**
 * The attributes targeting sees (see docs/evaluation.md): the OFREP context's top-level keys merged with the
 * entries of `context.properties` (the seed's style); on a clash the top-level value wins. The
 * `properties` key itself stays, so rules written against either style keep working.
 */
export function contextAttributes(context: Record<string, unknown>): Record<string, unknown> {
  const props = context["properties"];
  if (props === null || typeof props !== "object" || Array.isArray(props)) return context;
  return { ...(props as Record<string, unknown>), ...context };
}
