import { visit } from 'jsonc-parser';

/**
 * Reading JSON text where the parsed value cannot tell: keys sent twice, prototype keys, and
 * numbers written other than as they parse. The body parser (./body.ts) asks these after
 * JSON.parse, and only the cheap counts and scans run on every body.
 */

const QUOTE = 0x22;
/** Space, tab, line feed and carriage return: JSON's only whitespace. */
const JSON_WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** How many `:` follow a `"` (whitespace between): at least one for every key in a JSON text. */
export function keyEndsIn(text: string): number {
  let count = 0;
  for (let at = text.indexOf(':'); at !== -1; at = text.indexOf(':', at + 1)) {
    let before = at - 1;
    while (before >= 0 && JSON_WHITESPACE.has(text.charCodeAt(before))) before--;
    if (text.charCodeAt(before) === QUOTE) count++;
  }
  return count;
}

/** Bodies nest a few levels at most; deeper than this the schema refuses them anyway. */
const MAX_KEY_DEPTH = 32;

/** The keys of a parsed JSON value, at every level (none counted past MAX_KEY_DEPTH). */
export function keyCount(node: unknown, depth: number): number {
  if (node === null || typeof node !== 'object' || depth > MAX_KEY_DEPTH) return 0;
  let count = 0;
  if (Array.isArray(node)) {
    for (const item of node) count += keyCount(item, depth + 1);
    return count;
  }
  for (const key in node) count += 1 + keyCount((node as Record<string, unknown>)[key], depth + 1);
  return count;
}

/** Where the first key sent twice in one object stands (`metadata.note`); undefined if none. */
export function repeatedKeyPath(text: string): string | undefined {
  const open: Set<string>[] = [];
  let found: string | undefined;
  try {
    visit(
      text,
      {
        onObjectBegin: () => {
          open.push(new Set());
        },
        onObjectEnd: () => {
          open.pop();
        },
        onObjectProperty: (property, _offset, _length, _line, _column, pathOf) => {
          const keys = open.at(-1);
          if (keys?.has(property)) found ??= [...pathOf(), property].join('.');
          keys?.add(property);
        },
      },
      { disallowComments: true, allowTrailingComma: false },
    );
  } catch {
    // Nested past the stack: the schema refuses such a body on its own.
    return undefined;
  }
  return found;
}

/** Where a `__proto__` or `constructor.prototype` key stands in valid JSON text; undefined otherwise. */
export function prototypeKeyPath(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  // No deeper than a body the schema could accept (a deeper one is refused as invalid JSON), so that
  // a hostile nesting cannot exhaust the stack.
  const search = (node: unknown, path: string[]): string[] | undefined => {
    if (!node || typeof node !== 'object' || path.length > MAX_KEY_DEPTH) return undefined;
    for (const [key, item] of Object.entries(node)) {
      const here = [...path, key];
      if (key === '__proto__') return here;
      if (key === 'constructor' && item && typeof item === 'object' && Object.hasOwn(item, 'prototype'))
        return [...here, 'prototype'];
      const found = search(item, here);
      if (found) return found;
    }
    return undefined;
  };
  return search(value, [])?.join('.');
}

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
