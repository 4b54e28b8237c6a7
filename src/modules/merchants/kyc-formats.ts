/**
 * Indian KYC identifiers: format checks that catch typos before a human reviewer or a bank sees
 * them. They prove a value is well formed, never that it belongs to the merchant.
 */

export const BUSINESS_TYPES = [
  'proprietorship',
  'partnership',
  'private_limited',
  'public_limited',
  'llp',
  'trust',
  'society',
  'ngo',
  'individual',
] as const;
export type BusinessType = (typeof BUSINESS_TYPES)[number];

/** PAN: five letters, four digits, a letter. */
export const PAN_PATTERN = /^[A-Z]{5}[0-9]{4}[A-Z]$/;

/**
 * The fourth PAN character names the holder's status (P person, C company, F firm/LLP, T trust,
 * A association of persons). A company's PAN on a proprietorship is a mistake worth catching.
 */
const PAN_HOLDER_TYPES: Record<BusinessType, string> = {
  individual: 'P',
  proprietorship: 'P',
  partnership: 'F',
  llp: 'F',
  private_limited: 'C',
  public_limited: 'C',
  trust: 'T',
  society: 'AT',
  ngo: 'TAC',
};

export function panFitsBusinessType(pan: string, businessType: BusinessType): boolean {
  return PAN_HOLDER_TYPES[businessType].includes(pan.charAt(3));
}

export function expectedPanHolderTypes(businessType: BusinessType): string {
  return PAN_HOLDER_TYPES[businessType].split('').join(' or ');
}

/** Companies and LLPs are GST-registered in practice; smaller or non-profit entities may not be. */
export const GSTIN_REQUIRED_FOR: readonly BusinessType[] = ['private_limited', 'public_limited', 'llp'];

/** GSTIN: state code, the holder's PAN, entity number, 'Z', check character. */
export const GSTIN_PATTERN = /^[0-9]{2}[A-Z]{5}[0-9]{4}[A-Z][1-9A-Z]Z[0-9A-Z]$/;

const BASE36 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** The GSTIN check character: a Luhn mod 36 over the first 14 characters. */
export function gstinCheckCharacter(first14: string): string {
  let sum = 0;
  for (let index = 0; index < 14; index++) {
    const product = BASE36.indexOf(first14.charAt(index)) * (index % 2 === 0 ? 1 : 2);
    sum += Math.floor(product / 36) + (product % 36);
  }
  return BASE36.charAt((36 - (sum % 36)) % 36);
}

const GST_STATE_CODES = new Set([
  ...Array.from({ length: 38 }, (_, index) => String(index + 1).padStart(2, '0')),
  '97',
  '99',
]);

/** Undefined when valid, otherwise why not. */
export function gstinProblem(gstin: string, pan: string): string | undefined {
  if (!GSTIN_PATTERN.test(gstin)) return 'must be 15 characters: state code, PAN, entity number, Z, check';
  if (!GST_STATE_CODES.has(gstin.slice(0, 2))) return `has an unknown state code '${gstin.slice(0, 2)}'`;
  if (gstinCheckCharacter(gstin.slice(0, 14)) !== gstin.charAt(14)) return 'has a wrong check character';
  if (gstin.slice(2, 12) !== pan) return 'must contain the business PAN (characters 3 to 12)';
  return undefined;
}

/** IFSC: four letters naming the bank, a zero, six characters naming the branch. */
export const IFSC_PATTERN = /^[A-Z]{4}0[A-Z0-9]{6}$/;

/**
 * Banks Kosh can settle to, by the IFSC bank code. A code missing here is refused rather than
 * guessed; add a row to onboard merchants banking elsewhere.
 */
export const IFSC_BANKS: Readonly<Record<string, string>> = {
  AIRP: 'Airtel Payments Bank',
  AUBL: 'AU Small Finance Bank',
  BARB: 'Bank of Baroda',
  BDBL: 'Bandhan Bank',
  BKID: 'Bank of India',
  CBIN: 'Central Bank of India',
  CITI: 'Citibank',
  CIUB: 'City Union Bank',
  CNRB: 'Canara Bank',
  CSBK: 'CSB Bank',
  DBSS: 'DBS Bank India',
  DCBL: 'DCB Bank',
  ESFB: 'Equitas Small Finance Bank',
  FDRL: 'Federal Bank',
  HDFC: 'HDFC Bank',
  HSBC: 'HSBC',
  ICIC: 'ICICI Bank',
  IDFB: 'IDFC FIRST Bank',
  IDIB: 'Indian Bank',
  INDB: 'IndusInd Bank',
  IOBA: 'Indian Overseas Bank',
  JAKA: 'Jammu and Kashmir Bank',
  KARB: 'Karnataka Bank',
  KKBK: 'Kotak Mahindra Bank',
  KVBL: 'Karur Vysya Bank',
  MAHB: 'Bank of Maharashtra',
  PSIB: 'Punjab and Sind Bank',
  PUNB: 'Punjab National Bank',
  RATN: 'RBL Bank',
  SBIN: 'State Bank of India',
  SCBL: 'Standard Chartered Bank',
  SIBL: 'South Indian Bank',
  TMBL: 'Tamilnad Mercantile Bank',
  UBIN: 'Union Bank of India',
  UCBA: 'UCO Bank',
  UTIB: 'Axis Bank',
  YESB: 'Yes Bank',
};

/** Shows only the last four digits, keeping the length visible: `XXXXXXXX1234`. */
export function maskAccountNumber(accountNumber: string): string {
  return `${'X'.repeat(Math.max(accountNumber.length - 4, 0))}${accountNumber.slice(-4)}`;
}
