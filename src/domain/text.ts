/**
 * Characters that change how the text around them is shown rather than show themselves: control
 * characters (line breaks and tabs included) and the marks and overrides of writing direction,
 * with which `invoice\u202Efdp.exe` shows as "invoiceexe.pdf". Names Kosh shows to people
 * (merchants' names, beneficiaries, file names) refuse them.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused here
export const MISLEADING_CHARACTERS = /[\u0000-\u001f\u007f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * What keeps `trimmed` from being a name people are shown, or null when it can be one: fewer than
 * `min` characters, more than `max`, or a misleading character. Callers trim first and word the
 * error for their own field.
 */
export function shownNameProblem(
  trimmed: string,
  min: number,
  max = Number.POSITIVE_INFINITY,
): 'too_short' | 'too_long' | 'misleading' | null {
  if (trimmed.length < min) return 'too_short';
  if (trimmed.length > max) return 'too_long';
  return MISLEADING_CHARACTERS.test(trimmed) ? 'misleading' : null;
}

/**
 * Lower case for codes (bank and wallet codes): only A–Z change. Unicode's own lower-casing maps
 * other letters onto ASCII (the Kelvin sign U+212A to `k`), which would let a look-alike spelling
 * pass as a code.
 */
export function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]+/g, (run) => run.toLowerCase());
}
