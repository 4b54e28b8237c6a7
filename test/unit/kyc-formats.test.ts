import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { detectMime, fileNameProblem } from '../../src/modules/merchants/file-signature.js';
import {
  BUSINESS_TYPES,
  gstinCheckCharacter,
  gstinProblem,
  maskAccountNumber,
  panFitsBusinessType,
} from '../../src/modules/merchants/kyc-formats.js';
import { REQUIRED_DOCUMENTS } from '../../src/modules/merchants/requirements.js';
import { descriptorFrom } from '../../src/modules/merchants/vpas.service.js';

describe('GSTIN', () => {
  it('computes the check character of a widely published example GSTIN', () => {
    expect(gstinCheckCharacter('27AAPFU0939F1Z')).toBe('V');
    expect(gstinProblem('27AAPFU0939F1ZV', 'AAPFU0939F')).toBeUndefined();
  });

  it('catches every single-character typo in the first 14 characters', () => {
    const valid = '27AAPFU0939F1ZV';
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    for (let index = 0; index < 14; index++) {
      for (const replacement of alphabet) {
        if (replacement === valid[index]) continue;
        const typo = valid.slice(0, index) + replacement + valid.slice(index + 1);
        expect(gstinProblem(typo, typo.slice(2, 12))).toBeDefined();
      }
    }
  });

  it('refuses a GSTIN that does not embed the PAN', () => {
    expect(gstinProblem('27AAPFU0939F1ZV', 'AAPFU0939G')).toMatch(/PAN/);
  });
});

describe('PAN holder type', () => {
  it.each([
    ['ABCPS1234D', 'proprietorship', true],
    ['ABCPS1234D', 'private_limited', false],
    ['AABCK1234L', 'public_limited', true],
    ['AAPFU0939F', 'llp', true],
    ['AAATR1234K', 'trust', true],
    ['AAAAS1234K', 'society', true],
    ['AAACN1234K', 'ngo', true],
    ['AAACN1234K', 'individual', false],
  ] as const)('%s for %s: %s', (pan, type, fits) => {
    expect(panFitsBusinessType(pan, type)).toBe(fits);
  });
});

describe('requirements', () => {
  it('asks every business type for a PAN and an address proof', () => {
    for (const type of BUSINESS_TYPES) {
      expect(REQUIRED_DOCUMENTS[type]).toEqual(expect.arrayContaining(['pan', 'address_proof']));
    }
  });
});

describe('masking', () => {
  it('never shows more than the last four digits', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{9,18}$/), (number) => {
        const masked = maskAccountNumber(number);
        expect(masked).toHaveLength(number.length);
        expect(masked.slice(0, -4)).toMatch(/^X+$/);
        expect(masked.slice(-4)).toBe(number.slice(-4));
      }),
    );
  });
});

describe('file signatures', () => {
  it.each([
    ['%PDF-1.4', 'application/pdf'],
    ['\x89PNG\r\n\x1a\n', 'image/png'],
    ['\xff\xd8\xff\xe0', 'image/jpeg'],
    ['MZ\x90\x00', undefined],
    ['<html>', undefined],
    [' %PDF-1.4', undefined],
    ['', undefined],
  ])('%j → %s', (start, mime) => {
    expect(detectMime(Buffer.from(start, 'latin1'))).toBe(mime);
  });

  it.each([
    ['pan.pdf', undefined],
    ['PAN card (front).jpeg', undefined],
    ['../x.pdf', 'contains a path separator'],
    ['..\\x.pdf', 'contains a path separator'],
    ['..', "contains '..'"],
    ['a\u0000.pdf', 'contains control characters or direction marks'],
    ['invoice\u202efdp.exe', 'contains control characters or direction marks'],
    ['scan\u2067.pdf', 'contains control characters or direction marks'],
    ['पैन कार्ड.pdf', undefined],
  ])('file name %j → %s', (name, problem) => {
    expect(fileNameProblem(name)).toBe(problem);
  });
});

describe('VPA descriptor', () => {
  it('derives a descriptor from the display name', () => {
    expect(descriptorFrom('Asha Tiffins & Co.')).toBe('ashatiffinsco');
    expect(descriptorFrom('A1')).toBe('merchant');
    expect(descriptorFrom('x'.repeat(40))).toHaveLength(20);
  });
});
