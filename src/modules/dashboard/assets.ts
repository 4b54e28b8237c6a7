import { createHash } from 'node:crypto';

/**
 * The dashboard's only asset: its stylesheet, served by Kosh under a name that carries its hash
 * (cached for a year, a new name when it changes). Pages have no script at all, so the policy
 * allows none.
 */
const STYLESHEET = `
:root{--ink:#1b2230;--muted:#5b6475;--line:#dfe3ea;--bg:#f5f6f8;--card:#fff;--brand:#2446a8;--ok:#17683b;--bad:#a8281b;--warn:#8a5a00}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
a{color:var(--brand)}
header.top{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;padding:.6rem 1rem;background:var(--card);border-bottom:1px solid var(--line)}
.brand{font-weight:700;font-size:1.05rem;text-decoration:none;color:var(--ink)}
.account{color:var(--muted);font-size:.9rem}
.mode{display:inline-flex;gap:.25rem;align-items:center}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:1rem;font-size:.8rem;font-weight:600;background:#e8ebf2}
.badge.test{background:#fff1cc;color:#6b4a00}.badge.live{background:#d8f2e2;color:#0f5130}
.badge.captured,.badge.succeeded,.badge.processed,.badge.paid,.badge.activated,.badge.active{background:#d8f2e2;color:#0f5130}
.badge.failed,.badge.revoked,.badge.suspended{background:#fbe0dc;color:#7d1d12}
.badge.pending,.badge.created,.badge.attempted,.badge.under_review,.badge.expiring{background:#fff1cc;color:#6b4a00}
nav.main{display:flex;flex-wrap:wrap;gap:.25rem;padding:.4rem 1rem;background:var(--card);border-bottom:1px solid var(--line)}
nav.main a{padding:.35rem .6rem;border-radius:.3rem;text-decoration:none;color:var(--ink)}
nav.main a[aria-current=page]{background:#e6ebf7;color:var(--brand);font-weight:600}
main{padding:1rem;max-width:75rem;margin:0 auto}
h1{font-size:1.35rem;margin:.5rem 0 1rem;overflow-wrap:anywhere}h2{font-size:1.1rem;margin:1.5rem 0 .6rem}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:.75rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:.5rem;padding:.9rem}
.card .label{color:var(--muted);font-size:.85rem}.card .value{font-size:1.35rem;font-weight:700}
.table-wrap{position:relative;overflow-x:auto;background:var(--card);border:1px solid var(--line);border-radius:.5rem}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.5rem .7rem;border-bottom:1px solid var(--line);white-space:nowrap;font-size:.9rem}
th{color:var(--muted);font-weight:600;background:#fafbfc}
td.num,th.num{text-align:right}
tr:last-child td{border-bottom:0}
dl.fields{display:grid;grid-template-columns:minmax(8rem,max-content) 1fr;gap:.35rem 1rem;background:var(--card);border:1px solid var(--line);border-radius:.5rem;padding:.9rem;margin:0}
dl.fields dt{color:var(--muted)}dl.fields dd{margin:0;overflow-wrap:anywhere}
form.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end;margin-bottom:.8rem}
label{display:flex;flex-direction:column;gap:.2rem;font-size:.85rem;color:var(--muted)}
input,select,button{font:inherit;padding:.4rem .55rem;border:1px solid #b9c0cc;border-radius:.3rem;background:#fff;color:var(--ink)}
button,.button{background:var(--brand);color:#fff;border-color:var(--brand);cursor:pointer;text-decoration:none;display:inline-block;padding:.4rem .8rem;border-radius:.3rem}
button.secondary,.button.secondary{background:#fff;color:var(--brand)}
button.danger{background:var(--bad);border-color:var(--bad)}
form.inline{display:inline}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end;margin:.6rem 0}
.notice{padding:.7rem .9rem;border-radius:.4rem;margin:0 0 1rem;background:#e6ebf7;border:1px solid #c6d1ee}
.notice.error{background:#fbe0dc;border-color:#f1b9b0}
.secret{font-family:ui-monospace,monospace;overflow-wrap:anywhere;background:#fff;padding:.3rem;border:1px dashed #b9c0cc;display:block;margin-top:.3rem}
.mono{font-family:ui-monospace,monospace;font-size:.85rem;overflow-wrap:anywhere}
.muted{color:var(--muted)}
.pager{display:flex;gap:.5rem;margin-top:.8rem}
.timeline{list-style:none;padding:0;margin:0;background:var(--card);border:1px solid var(--line);border-radius:.5rem}
.timeline>li{padding:.6rem .8rem;border-bottom:1px solid var(--line)}.timeline>li:last-child{border-bottom:0}
.timeline ul{margin:.3rem 0 0;padding-left:1.1rem;font-size:.88rem}
.chart{width:100%;height:auto;background:var(--card);border:1px solid var(--line);border-radius:.5rem}
.chart rect{fill:#5b7bd5}
.login{max-width:24rem;margin:4rem auto;background:var(--card);border:1px solid var(--line);border-radius:.5rem;padding:1.5rem}
.login form{display:grid;gap:.8rem}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (max-width:40rem){main{padding:.6rem}th,td{padding:.4rem .5rem}dl.fields{grid-template-columns:1fr}dl.fields dd{margin-bottom:.4rem}}
`;

export const STYLESHEET_NAME = `dashboard.${createHash('sha256').update(STYLESHEET).digest('hex').slice(0, 12)}.css`;

export function stylesheet(): string {
  return STYLESHEET;
}
