import QRCode from 'qrcode';

/**
 * A QR code of `text` as a `data:image/png;base64,…` URL: the `qrcode` library's encoder (medium
 * error correction, a quiet zone of four modules as the standard asks), drawn 3 pixels a module in
 * grey levels without PNG row filters. A page scales it up crisply with `image-rendering:
 * pixelated`; a PNG (rather than SVG) because merchants' native apps show it as it is. A larger or
 * filtered PNG costs more CPU per code (docs/performance.md, "UPI QR codes").
 */
// pngjs options, passed through by the encoder (its types name only the deflate ones): no adaptive
// row filter, one grey channel instead of RGBA.
const OPTIONS = {
  errorCorrectionLevel: 'M',
  margin: 4,
  scale: 3,
  type: 'image/png',
  rendererOpts: { filterType: 0, colorType: 0 },
} as QRCode.QRCodeToDataURLOptions;

export function qrDataUrl(text: string): Promise<string> {
  return QRCode.toDataURL(text, OPTIONS);
}
