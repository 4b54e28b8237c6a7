import { visit } from 'jsonc-parser';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const isDigit = (code: number) => code >= 0x30 && code <= 0x39;

/**
 * The first number in JSON text written with a fraction or an exponent that a double reads as a
 * whole number: `5000.0`, `5e3`, or `99.99999999999999999` (read as 100). JSON.parse makes each an
 * integer, so a field that takes integers (an amount in paise) would take a value other than the one
 * written, or one the caller did not mean. One pass over the text, skipping strings; undefined if none.
 */
export function wholeNumberWrittenOtherwise(text: string): string | undefined {
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      for (at++; at < text.length; at++) {
        const inside = text.charCodeAt(at);
        if (inside === BACKSLASH) at++;
        else if (inside === QUOTE) break;
      }
      continue;
    }
    if (code !== MINUS && !isDigit(code)) continue;
    let end = at + 1;
    let plain = true;
    for (; end < text.length; end++) {
      const next = text.charCodeAt(end);
      if (isDigit(next)) continue;
      if (next === DOT || next === LOWER_E || next === UPPER_E || next === PLUS || next === MINUS) {
        plain = false;
        continue;
      }
      break;
    }
    if (!plain) {
      const written = text.slice(at, end);
      if (Number.isInteger(Number(written))) return written;
    }
    at = end - 1;
  }
  return undefined;
}

/** Where the literal `written` first stands in JSON text (`metadata.n`, `amount`); '' at the top. */
export function pathOfLiteral(text: string, written: string): string | undefined {
  let found: string | undefined;
  try {
    visit(text, {
      onLiteralValue: (_value, offset, length, _line, _column, pathOf) => {
        if (found === undefined && text.slice(offset, offset + length) === written)
          found = pathOf().join('.');
      },
    });
  } catch {
    return undefined;
  }
  return found;
}
