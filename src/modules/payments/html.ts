import { amountText, hiddenInputs, newNonce, nonceDocument, type Page } from '../../pages/document.js';
import { escapeHtml } from '../../pages/html.js';

// The payment pages' fields and the fakes in test/ escape with the shared helper.
export { amountText, escapeHtml, hiddenInputs, newNonce, type Page };

/** A choice on a sandbox page (the bank's, or the sandbox UPI app's), in the customer's words. */
export interface SandboxChoiceText {
  choice: string;
  label: string;
  says: string;
}

/** The simulated bank's answers that stay pending before they settle: on every sandbox page. */
export const PENDING_OUTCOMES: readonly SandboxChoiceText[] = [
  {
    choice: 'pending_success',
    label: 'Pending, then success',
    says: 'The bank answers “pending”; a little later it confirms the payment.',
  },
  {
    choice: 'pending_failure',
    label: 'Pending, then failure',
    says: 'The bank answers “pending”; a little later it declines the payment.',
  },
];

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;padding:2rem;color:#1d2330}
main{max-width:28rem;margin:0 auto;background:#fff;border-radius:.5rem;padding:1.5rem;box-shadow:0 1px 4px #0002}
h1{font-size:1.2rem;margin-top:0}dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem}dt{color:#667}
dd{margin:0;font-weight:600;overflow-wrap:anywhere}.choices{display:flex;gap:.5rem;margin-top:1.5rem}
button{flex:1;padding:.7rem;border:0;border-radius:.3rem;font-size:1rem;cursor:pointer}
.success{background:#1f8a4c;color:#fff}.failure{background:#c0392b;color:#fff}.cancel{background:#dde}
.note{color:#667;font-size:.85rem}h2{font-size:1rem;margin:1.5rem 0 .5rem}
.outcomes{list-style:none;padding:0;margin:0;display:grid;gap:.5rem}
.outcomes li{display:grid;grid-template-columns:11rem 1fr;gap:.75rem;align-items:center}
.outcomes button{background:#e8ecf5;color:#1d2330;font-size:.9rem}.says{color:#556;font-size:.85rem}
@media (max-width:30rem){body{padding:1rem}.outcomes li{grid-template-columns:1fr}}`;

/**
 * A bank page; `nonce` authorises its one style element (the common style and the page's own
 * `style`) and at most one script. `head` is trusted markup for the head (a refresh fallback).
 */
export function bankDocument(options: {
  title: string;
  nonce: string;
  body: string;
  script?: string;
  style?: string;
  head?: string;
}): string {
  return nonceDocument({ ...options, style: STYLE + (options.style ?? '') });
}
