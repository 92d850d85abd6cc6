/** Cuts text to `max` code points (never inside a surrogate pair), marking the cut with "…". */
export function cutCodePoints(text: string, max: number): string {
  const cps = Array.from(text);
  return cps.length <= max ? text : `${cps.slice(0, Math.max(0, max - 1)).join('')}…`;
}
