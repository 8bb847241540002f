/**
 * The metric names a PromQL expression selects, and the check that it reads each of the library's
 * series under the name of every path (the histogram is named differently when pushed).
 */
import {
  namesOf,
  type SeriesKey,
  SHAPES,
  series,
  seriesByShape,
} from "../../dashboards/generator/names.js";

/** PromQL words that are neither functions nor metric names. */
const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset"]);

/**
 * The metric names an expression selects: bare selectors, and the names of a `__name__=~"a|b"`
 * matcher. Label matchers, label lists, ranges and strings are removed first, and a word followed
 * by `(` is a function or an aggregation. A `__name__` matcher that is a pattern selects the
 * library's series it matches.
 */
export function metricNamesIn(expression: string): string[] {
  const names = new Set<string>();
  const every = SHAPES.flatMap((shape) => Object.values(seriesByShape[shape]));
  for (const [, alternatives] of expression.matchAll(/__name__=~"([^"]*)"/g)) {
    const pattern = alternatives ?? "";
    if (/^[\w:|]*$/.test(pattern)) {
      for (const name of pattern.split("|")) names.add(name);
    } else {
      // A pattern: the library's series it matches.
      for (const name of every) if (new RegExp(`^(?:${pattern})$`).test(name)) names.add(name);
    }
  }
  const stripped = expression
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    .replace(/\boffset\s+\w+/g, " ");
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const word = match[0];
    const rest = stripped.slice((match.index ?? 0) + word.length).trimStart();
    if (rest.startsWith("(") || KEYWORDS.has(word)) continue;
    names.add(word);
  }
  return [...names];
}

/**
 * The names an expression leaves out of a series it reads: for every series of the library it
 * selects under one name, the names the other path gives it. Empty when it reads both paths.
 */
export function namesMissedIn(expression: string): string[] {
  const selected = new Set(metricNamesIn(expression));
  return (Object.keys(series) as SeriesKey[]).flatMap((key) => {
    const names = namesOf(key);
    return names.some((name) => selected.has(name))
      ? names.filter((name) => !selected.has(name))
      : [];
  });
}
