/**
 * Text from the input, a checkpointer or the command line made safe for a terminal: nothing in a
 * thread id, a file name or an error message can start a line of its own, send an escape
 * sequence, or reorder what is shown.
 */

/**
 * What a terminal acts on rather than shows: the C0 and C1 controls and DEL (`\p{Cc}`), the line
 * and paragraph separators, and the bidirectional controls.
 */
const UNSAFE = /[\p{Cc}\p{Zl}\p{Zp}\p{Bidi_Control}]/gu;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** The code point of a character of {@link UNSAFE}, all in the BMP, in `digits` hex digits. */
function hex(character: string, digits: number): string {
  return (character.codePointAt(0) ?? 0).toString(16).padStart(digits, "0");
}

/**
 * The text as one terminal line: each control character (C0, DEL, C1), line or paragraph
 * separator, or bidirectional control becomes a visible escape: `\n`, `\r` and `\t`, `\x1b` up
 * to U+00FF, `\u202e` above. Everything else, the backslash included, stays as it is.
 *
 * @example
 * ```ts
 * terminalSafe("x\n\u001b]0;pwned\u0007"); // 'x\\n\\x1b]0;pwned\\x07'
 * ```
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (character) => {
    const short = SHORT_ESCAPES[character];
    if (short !== undefined) return short;
    return character <= "\u00ff" ? `\\x${hex(character, 2)}` : `\\u${hex(character, 4)}`;
  });
}

/**
 * `JSON.stringify(value)` with no character a terminal acts on: besides the C0 controls it
 * escapes itself, DEL, the C1 controls, the line and paragraph separators and the bidirectional
 * controls are written as `\u0085`-style escapes, so the JSON parses to the same value.
 */
export function terminalSafeJson(value: unknown): string {
  // Those characters only occur inside strings of the JSON, where a \u escape is the same text.
  return JSON.stringify(value).replace(UNSAFE, (character) => `\\u${hex(character, 4)}`);
}
