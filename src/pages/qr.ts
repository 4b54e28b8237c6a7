import QRCode from 'qrcode';

/**
 * A QR code of `text` as a `data:image/png;base64,…` URL (the `qrcode` library's encoder; medium
 * error correction, a quiet zone of four modules as the standard asks, 6 pixels a module).
 */
export function qrDataUrl(text: string): Promise<string> {
  return QRCode.toDataURL(text, { errorCorrectionLevel: 'M', margin: 4, scale: 6, type: 'image/png' });
}
