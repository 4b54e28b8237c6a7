import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

type Decode = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
// jsQR is a CommonJS bundle whose types declare an ES default export; take whichever Node hands over.
const jsQR = ((jsQRModule as unknown as { default?: Decode }).default ??
  (jsQRModule as unknown as Decode)) as Decode;

/**
 * Decodes a QR code given as `data:image/png;base64,…` (or a PNG buffer) with an independent
 * decoder (jsQR over pngjs); undefined when no code is found.
 */
export function decodeQr(image: string | Buffer): string | undefined {
  const prefix = 'data:image/png;base64,';
  const bytes =
    typeof image === 'string'
      ? image.startsWith(prefix)
        ? Buffer.from(image.slice(prefix.length), 'base64')
        : undefined
      : image;
  if (!bytes) return undefined;
  const png = PNG.sync.read(bytes);
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data;
}
