/**
 * The README's TypeScript snippets and the `npm install` lines of the `sh` block before each, as
 * the package test runs them: read from the README itself, so the commands a user copies are the
 * ones tested.
 */

/** A fenced code block of a Markdown file. */
interface FencedBlock {
  /** The info string: `ts`, `sh`, ... */
  readonly lang: string;
  readonly body: string;
  /** The 1-based line of its opening fence. */
  readonly line: number;
  /** The heading it stands under (the file's title before the first section). */
  readonly section: string;
}

/** One `npm install` line of the README, and what it installs on the Node.js that runs it. */
export interface InstallCommand {
  /** The line as the README writes it, comment included. */
  readonly line: string;
  /**
   * The packages it names, in its order, without its comment; on Node.js 20, the spec of an
   * `# on Node.js 20: <spec>` comment stands in for the package it names.
   */
  readonly packages: readonly string[];
}

/** A ```` ```ts ```` block of the README with the install lines of the `sh` block before it. */
export interface ReadmeSnippet {
  readonly code: string;
  /** The 1-based line of its opening fence. */
  readonly line: number;
  /** The module specifiers it imports (`tool-call-resilience/setup`, `zod`, ...). */
  readonly imports: readonly string[];
  /** The `npm install` lines right before it, in the same section; empty when there are none. */
  readonly installs: readonly InstallCommand[];
}

function fencedBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const lines = markdown.split("\n");
  let section = "";
  for (let index = 0; index < lines.length; index++) {
    const text = lines[index] as string;
    const heading = /^#{1,6} (.*)$/.exec(text);
    if (heading !== null) {
      section = heading[1] as string;
      continue;
    }
    const fence = /^```(\S*)\s*$/.exec(text);
    if (fence === null) continue;
    const start = index;
    const body: string[] = [];
    for (index++; index < lines.length && !/^```\s*$/.test(lines[index] as string); index++) {
      body.push(lines[index] as string);
    }
    blocks.push({
      lang: fence[1] as string,
      body: `${body.join("\n")}\n`,
      line: start + 1,
      section,
    });
  }
  return blocks;
}

/** The name of the package an npm spec installs: `@openai/agents@0.14.3` → `@openai/agents`. */
export function packageNameOf(spec: string): string {
  const at = spec.indexOf("@", 1);
  return at === -1 ? spec : spec.slice(0, at);
}

/** The package a module specifier is in: `@langchain/langgraph/prebuilt` → `@langchain/langgraph`. */
export function packageOfSpecifier(specifier: string): string {
  const parts = specifier.split("/");
  return (specifier.startsWith("@") ? parts.slice(0, 2) : parts.slice(0, 1)).join("/");
}

/**
 * Reads one `npm install` line. A comment `# on Node.js 20: <spec>` replaces, on Node.js 20 only,
 * the package its spec names; any other comment is the reader's, not npm's, and is dropped.
 */
function parseInstallLine(line: string, nodeMajor: number): InstallCommand {
  const match = /^npm install\s+([^#]*?)\s*(?:#\s*(.*))?$/.exec(line.trim());
  if (match === null) throw new Error(`not an npm install line: ${line}`);
  const packages = (match[1] as string).split(/\s+/).filter((word) => word !== "");
  const onNode20 = /^on Node\.js 20:\s*(\S+)/.exec(match[2] ?? "")?.[1];
  if (onNode20 === undefined || nodeMajor !== 20) return { line: line.trim(), packages };
  const name = packageNameOf(onNode20);
  if (!packages.includes(name)) {
    throw new Error(`the comment of \`${line.trim()}\` names ${name}, which the line does not`);
  }
  return {
    line: line.trim(),
    packages: packages.map((spec) => (spec === name ? onNode20 : spec)),
  };
}

/** The README's TypeScript snippets, in order, each with the install lines before it. */
export function readmeSnippets(readme: string, nodeMajor: number): ReadmeSnippet[] {
  const blocks = fencedBlocks(readme);
  return blocks.flatMap((block, index) => {
    if (block.lang !== "ts") return [];
    const before = blocks[index - 1];
    const installLines =
      before !== undefined && before.lang === "sh" && before.section === block.section
        ? before.body.split("\n").filter((line) => line.startsWith("npm install "))
        : [];
    const imports = [...block.body.matchAll(/^import\s[^;]*?\bfrom\s+"([^"]+)"/gm)].map(
      (match) => match[1] as string,
    );
    return [
      {
        code: block.body,
        line: block.line,
        imports,
        installs: installLines.map((line) => parseInstallLine(line, nodeMajor)),
      },
    ];
  });
}
