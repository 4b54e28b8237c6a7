import { MISLEADING_CHARACTERS } from '../../domain/text.js';

/**
 * The kind of an uploaded file, from its first bytes only: names and Content-Type headers are
 * chosen by the sender and prove nothing. Three signatures do not justify a dependency
 * (`file-type`, the usual library, needs Node 22).
 */
export type AcceptedMime = 'application/pdf' | 'image/png' | 'image/jpeg';

const SIGNATURES: readonly { mime: AcceptedMime; bytes: readonly number[] }[] = [
  { mime: 'application/pdf', bytes: [0x25, 0x50, 0x44, 0x46, 0x2d] }, // %PDF-
  { mime: 'image/png', bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { mime: 'image/jpeg', bytes: [0xff, 0xd8, 0xff] },
];

export function detectMime(content: Buffer): AcceptedMime | undefined {
  return SIGNATURES.find(({ bytes }) => bytes.every((byte, index) => content[index] === byte))?.mime;
}

/**
 * A client's file name is kept as metadata only, never as a path; one that tries to name a path
 * (separators, `..`, control characters, direction marks) is refused so the mistake or the attack is visible.
 */
export function fileNameProblem(name: string | undefined): string | undefined {
  if (name === undefined || name === '') return undefined;
  if (name.length > 255) return 'is longer than 255 characters';
  if (/[/\\]/.test(name)) return 'contains a path separator';
  if (name === '.' || name === '..' || name.includes('..')) return "contains '..'";
  if (MISLEADING_CHARACTERS.test(name)) return 'contains control characters or direction marks';
  return undefined;
}
