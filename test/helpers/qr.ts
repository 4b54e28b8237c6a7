import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

type Decode = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
// jsQR is a CommonJS bundle whose types declare an ES default export; take whichever Node hands over.
const jsQR = ((jsQRModule as unknown as { default?: Decode }).default ??
  (jsQRModule as unknown as Decode)) as Decode;

const PREFIX = 'data:image/png;base64,';

/** The PNG file of a `data:image/png;base64,…` URL (a buffer as it is); undefined for any other URL. */
export function pngBytes(image: string | Buffer): Buffer | undefined {
  if (typeof image !== 'string') return image;
  return image.startsWith(PREFIX) ? Buffer.from(image.slice(PREFIX.length), 'base64') : undefined;
}

/**
 * Decodes a QR code given as `data:image/png;base64,…` (or a PNG buffer) with an independent
 * decoder (jsQR over pngjs); undefined when no code is found.
 */
export function decodeQr(image: string | Buffer): string | undefined {
  const bytes = pngBytes(image);
  if (!bytes) return undefined;
  const png = PNG.sync.read(bytes);
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data;
}
