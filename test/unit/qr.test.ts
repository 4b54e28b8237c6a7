import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { qrDataUrl } from '../../src/pages/qr.js';
import { decodeQr, pngBytes } from '../helpers/qr.js';

/** A PNG file's colour type: the IHDR chunk's tenth byte (signature 8, length 4, type 4, size 8, depth 1). */
const colourType = (file: Buffer) => file[25];

describe('UPI QR codes (src/pages/qr.ts)', () => {
  const links = [
    'upi://pay?pa=kosh.pay_01m8ejggba49yrs55w7q89z5m6@kosh&pn=Chai%20%26%20Co&am=50.00&cu=INR&tr=pay_01m8ejggba49yrs55w7q89z5m6',
    'upi://pay?pa=a@b&am=1.00',
    `upi://pay?pa=merchant@bank&tn=${'x'.repeat(300)}`,
    'http://localhost:3000/v1/payments/pay_01m8ejggba49yrs55w7q89z5m6/upi-simulator/',
  ];

  it.each(links)('reads back as the text it was drawn from, by an independent decoder: %s', (link) => {
    const url = qrDataUrl(link);
    expect(url.startsWith('data:image/png;base64,')).toBe(true);
    expect(decodeQr(url)).toBe(link);
  });

  it('is one grey channel, 3 pixels a module, with the quiet zone of 4 modules the standard asks', () => {
    const link = links[0]!;
    const file = pngBytes(qrDataUrl(link))!;
    // Stored as one grey channel (colour type 0), not RGB (2) or RGBA (6).
    expect(colourType(file)).toBe(0);
    const image = PNG.sync.read(file);
    const modules = QRCode.create(link, { errorCorrectionLevel: 'M' }).modules.size;
    expect(image.width).toBe((modules + 8) * 3);
    expect(image.height).toBe(image.width);
    // Decoded to RGBA: every pixel black or white, opaque.
    const values = new Set<string>();
    for (let offset = 0; offset < image.data.length; offset += 4) {
      values.add(image.data.subarray(offset, offset + 4).join(','));
    }
    expect([...values].sort()).toEqual(['0,0,0,255', '255,255,255,255']);
    // The quiet zone (12 pixels on each side) is white; the finder pattern's corner starts right after it.
    const at = (x: number, y: number) => image.data[(y * image.width + x) * 4];
    const quiet = new Set<number | undefined>();
    for (let i = 0; i < image.width; i++) {
      for (let edge = 0; edge < 12; edge++) {
        for (const line of [edge, image.width - 1 - edge]) quiet.add(at(i, line)).add(at(line, i));
      }
    }
    expect([...quiet]).toEqual([255]);
    expect(at(12, 12)).toBe(0);
  });
});
