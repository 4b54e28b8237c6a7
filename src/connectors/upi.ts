/**
 * A VPA (UPI id): `name@handle`, 3 to 100 characters. The name takes letters, digits, dots,
 * hyphens and underscores; the handle (the payer's PSP) letters, digits and dots.
 */
export const VPA = /^[A-Za-z0-9._-]+@[A-Za-z0-9.]+$/;

export function isVpa(value: string): boolean {
  return value.length >= 3 && value.length <= 100 && VPA.test(value);
}

/** `su*****@kosh`: the first two characters of the name, the handle in full. */
export function maskVpa(vpa: string): string {
  const at = vpa.lastIndexOf('@');
  if (at < 0) return '*'.repeat(vpa.length);
  const name = vpa.slice(0, at);
  const shown = name.slice(0, Math.min(2, Math.max(0, name.length - 1)));
  return `${shown}${'*'.repeat(name.length - shown.length)}${vpa.slice(at)}`;
}

/** Paise as rupees with two decimals and no grouping (`123456` → `1234.56`): UPI's `am`. */
export function rupees(paise: number): string {
  return `${Math.floor(paise / 100)}.${String(paise % 100).padStart(2, '0')}`;
}

/**
 * A UPI intent link (NPCI's deep-link form): payee address and name, the transaction reference,
 * the amount in rupees with two decimals, the currency and a note. The same link is the QR.
 */
export function upiLink(parts: {
  payeeVpa: string;
  payeeName: string;
  reference: string;
  /** In paise: UPI takes rupees only. */
  amount: number;
  note: string;
}): string {
  const query = new URLSearchParams({
    pa: parts.payeeVpa,
    pn: parts.payeeName,
    tr: parts.reference,
    am: rupees(parts.amount),
    cu: 'INR',
    tn: parts.note.slice(0, 50),
  });
  // UPI apps read %20, not +, as a space.
  return `upi://pay?${query.toString().replace(/\+/g, '%20')}`;
}
