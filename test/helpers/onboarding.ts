import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { gstinCheckCharacter } from '../../src/modules/merchants/kyc-formats.js';
import type { Harness, TestAccount } from './harness.js';

/** A valid GSTIN for a PAN: state code, PAN, entity 1, Z, computed check character. */
export function gstinFor(pan: string, state = '27'): string {
  const first14 = `${state}${pan}1Z`;
  return `${first14}${gstinCheckCharacter(first14)}`;
}

/** A private limited company: the business type asking for the most (GSTIN, incorporation). */
export function merchantBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const pan = (overrides.pan as string | undefined) ?? 'AABCK1234L';
  return {
    legal_name: 'Kirana Kart Private Limited',
    display_name: 'Kirana Kart',
    email: 'owner@kiranakart.in',
    contact: '+919876543210',
    business_type: 'private_limited',
    business_category: 'ecommerce',
    business_subcategory: 'grocery',
    website: 'https://kiranakart.in',
    address: {
      line1: '12 MG Road',
      line2: 'Floor 2',
      city: 'Bengaluru',
      state: 'Karnataka',
      postal_code: '560001',
      country: 'IN',
    },
    pan,
    gstin: gstinFor(pan),
    ...overrides,
  };
}

export function proprietorBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const {
    gstin: _gstin,
    website: _website,
    ...base
  } = merchantBody({
    legal_name: 'Asha Sharma',
    display_name: 'Asha Tiffins',
    business_type: 'proprietorship',
    business_category: 'food',
    business_subcategory: 'cloud_kitchens',
    pan: 'ABCPS1234D',
  });
  return { ...base, ...overrides };
}

export const BANK = {
  account_number: '001234567890',
  ifsc: 'HDFC0001234',
  beneficiary_name: 'Kirana Kart Private Limited',
  account_type: 'current',
};

export const FILES = {
  pdf: Buffer.concat([
    Buffer.from('%PDF-1.7\n1 0 obj\n<<>>\nendobj\n'),
    randomBytes(64),
    Buffer.from('\n%%EOF\n'),
  ]),
  png: Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(64)]),
  jpeg: Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(64)]),
  exe: Buffer.concat([Buffer.from('MZ\x90\x00\x03\x00\x00\x00'), randomBytes(64)]),
  html: Buffer.from('<!DOCTYPE html><html><body><script>alert(1)</script></body></html>'),
};

export interface Part {
  name: string;
  value?: string;
  filename?: string;
  content?: Buffer;
  contentType?: string;
}

export function multipart(parts: Part[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----kosh${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if (part.filename !== undefined) head += `; filename="${part.filename}"`;
    head += '\r\n';
    if (part.content !== undefined)
      head += `Content-Type: ${part.contentType ?? 'application/octet-stream'}\r\n`;
    chunks.push(
      Buffer.from(`${head}\r\n`),
      part.content ?? Buffer.from(part.value ?? ''),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    payload: Buffer.concat(chunks),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

export async function uploadDocument(
  harness: Harness,
  auth: TestAccount,
  mid: string,
  documentType: string,
  file: { content: Buffer; filename?: string; contentType?: string } = { content: FILES.pdf },
): Promise<LightMyRequestResponse> {
  const { payload, headers } = multipart([
    { name: 'document_type', value: documentType },
    {
      name: 'file',
      filename: file.filename ?? 'document.pdf',
      content: file.content,
      contentType: file.contentType ?? 'application/pdf',
    },
  ]);
  return harness.app.inject({
    method: 'POST',
    url: `/v1/api-portal/merchants/kyc-document/${mid}/`,
    headers: { ...headers, authorization: auth.auth },
    payload,
  });
}
