/**
 * Reading a Prometheus text exposition: the demo reads its own endpoint for the live status line
 * and the summary, the same way Prometheus reads it.
 */

/** One sample line: `name{label="value",...} value`. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The scraped text, its sample lines parsed, and its `# HELP`, `# TYPE` and `# UNIT` lines. */
export interface Exposition {
  readonly text: string;
  readonly samples: readonly Sample[];
  readonly metadata: readonly string[];
  /** Samples of this name whose labels include `where`. */
  find(name: string, where?: Readonly<Record<string, string>>): Sample[];
  /** The sum of the values of {@link find}. */
  sum(name: string, where?: Readonly<Record<string, string>>): number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the Prometheus text exposition format. */
export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const metadata: string[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) {
      metadata.push(line);
      continue;
    }
    const match = SAMPLE.exec(line.trim());
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? "").matchAll(LABEL)) {
      labels[key as string] = (value as string).replace(/\\(.)/g, (_, c: string) =>
        c === "n" ? "\n" : c,
      );
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  const find = (name: string, where: Readonly<Record<string, string>> = {}) =>
    samples.filter(
      (sample) =>
        sample.name === name &&
        Object.entries(where).every(([key, value]) => sample.labels[key] === value),
    );
  return {
    text,
    samples,
    metadata,
    find,
    sum: (name, where) => find(name, where).reduce((total, sample) => total + sample.value, 0),
  };
}

/** Fetches an exposition endpoint and parses it. */
export async function scrape(url: string): Promise<Exposition> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}`);
  return parseExposition(await response.text());
}
