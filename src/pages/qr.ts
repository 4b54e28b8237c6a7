import { PNG } from 'pngjs';
import QRCode from 'qrcode';

/** The standard's quiet zone, in modules. */
const MARGIN = 4;
/** Pixels a module: a page scales the image up crisply with `image-rendering: pixelated`. */
const SCALE = 3;
const DARK = 0x00;
const LIGHT = 0xff;

/**
 * A QR code of `text` as a `data:image/png;base64,…` URL: the `qrcode` library's encoder (medium
 * error correction, the best of its eight masks), drawn here 3 pixels a module straight into one
 * grey channel and packed by `pngjs` without row filters. A PNG (rather than SVG) because
 * merchants' native apps show it as it is. Drawing the grey pixels directly skips the library's
 * RGBA image and its conversion back to grey, about 40 % of a code's CPU (docs/performance.md,
 * "UPI QR codes").
 */
export function qrDataUrl(text: string): string {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const size = modules.size;
  const side = (size + 2 * MARGIN) * SCALE;
  const grey = Buffer.alloc(side * side, LIGHT);
  for (let row = 0; row < size; row++) {
    for (let column = 0; column < size; column++) {
      if (!modules.get(row, column)) continue;
      const x = (column + MARGIN) * SCALE;
      for (let line = 0; line < SCALE; line++) {
        const start = ((row + MARGIN) * SCALE + line) * side + x;
        grey.fill(DARK, start, start + SCALE);
      }
    }
  }
  // The packer reads only the image's size and pixels: no PNG stream object (with its parser) is built.
  const image = { width: side, height: side, data: grey } satisfies Pick<PNG, 'width' | 'height' | 'data'>;
  const png = PNG.sync.write(image as PNG, {
    colorType: 0,
    inputColorType: 0,
    inputHasAlpha: false,
    filterType: 0,
  });
  return `data:image/png;base64,${png.toString('base64')}`;
}
