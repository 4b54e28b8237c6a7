import fs from 'node:fs';
import path from 'node:path';
import type { Measured } from './load.js';
import type { BaselineName } from './scenarios.js';

export interface ScenarioResult extends Measured {
  name: string;
  baseline: BaselineName;
  /** The throughput of its baseline, measured right before it. */
  baseline_rps?: number;
  /** Throughput divided by the baseline's. */
  ratio?: number;
  /** The baseline's CPU per request divided by the scenario's: the same ratio, free of the neighbours' noise. */
  cpu_ratio?: number;
}

export interface Report {
  date: string;
  machine: {
    cores: number;
    cpu: string;
    memory_gb: number;
    os: string;
    /** 1, 5 and 15-minute load averages: other work on the machine skews throughput, not CPU per request. */
    load_average_at_start: number[];
    load_average_at_end: number[];
  };
  versions: Record<string, string>;
  settings: Record<string, string | number | boolean>;
  /** One per scenario, measured right before it (`paired_with`). */
  baselines: Array<Measured & { name: BaselineName; paired_with: string; description: string }>;
  scenarios: ScenarioResult[];
  scale?: { orders: number; load_seconds: number; scenarios: ScenarioResult[] };
}

const ms = (value: number) => (value < 10 ? value.toFixed(1) : String(Math.round(value)));
const ratio = (value: number | undefined) => (value === undefined ? '—' : `${(value * 100).toFixed(0)} %`);

function rows(results: Array<ScenarioResult | (Measured & { name: string })>): string[] {
  return results.map((r) => {
    const bad = r.errors + r.non2xx + r.timeouts;
    const share = 'ratio' in r ? ` ${ratio(r.ratio)} |` : '';
    const cpuShare = 'ratio' in r ? ` ${ratio(r.cpu_ratio)} |` : '';
    return `| ${r.name} | ${r.rps} |${share} ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | ${bad} | ${r.cpu_us} | ${r.db_cpu_us} |${cpuShare}`;
  });
}

const SCENARIO_HEADER =
  '| scenario | req/s | of baseline | p50 ms | p99 ms | max ms | errors + non-2xx | server CPU µs/req | database CPU µs/req | CPU efficiency vs baseline |';
const SCENARIO_RULE = '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|';

export function markdown(report: Report): string {
  const lines = [
    `# Benchmark results`,
    '',
    `${report.date} · ${report.machine.cores} cores (${report.machine.cpu}), ${report.machine.memory_gb} GB, ${report.machine.os} · load average ${report.machine.load_average_at_start.join(' ')} at start, ${report.machine.load_average_at_end.join(' ')} at end`,
    '',
    Object.entries(report.versions)
      .map(([name, version]) => `${name} ${version}`)
      .join(' · '),
    '',
    Object.entries(report.settings)
      .map(([name, value]) => `${name}=${value}`)
      .join(' · '),
    '',
    SCENARIO_HEADER,
    SCENARIO_RULE,
    ...rows(report.scenarios),
    '',
    'Each baseline is measured right before the scenario it is compared with:',
    '',
    '| baseline → scenario | req/s | p50 ms | p99 ms | max ms | errors + non-2xx | server CPU µs/req | database CPU µs/req |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows(report.baselines.map((b) => ({ ...b, name: `${b.name} → ${b.paired_with}` }))),
    '',
    ...[...new Map(report.baselines.map((b) => [b.name, b.description])).entries()].map(
      ([name, description]) => `- ${name}: ${description}`,
    ),
  ];
  if (report.scale) {
    lines.push(
      '',
      `## After bulk-loading ${report.scale.orders.toLocaleString('en')} orders (${report.scale.load_seconds} s)`,
      '',
      SCENARIO_HEADER,
      SCENARIO_RULE,
      ...rows(report.scale.scenarios),
    );
  }
  return `${lines.join('\n')}\n`;
}

export function printTable(title: string, results: ScenarioResult[]): void {
  process.stdout.write(`\n${title}\n`);
  const header = [
    'scenario',
    'req/s',
    'of baseline',
    'p50 ms',
    'p99 ms',
    'max ms',
    'errors+non2xx',
    'cpu µs/req',
    'db µs/req',
    'cpu vs base',
  ];
  const body = results.map((r) => [
    r.name,
    String(r.rps),
    ratio(r.ratio),
    ms(r.p50),
    ms(r.p99),
    ms(r.max),
    String(r.errors + r.non2xx + r.timeouts),
    String(r.cpu_us),
    String(r.db_cpu_us),
    ratio(r.cpu_ratio),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  for (const row of [header, ...body]) {
    process.stdout.write(
      `${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')}\n`,
    );
  }
}

export function writeResults(dir: string, report: Report): string[] {
  fs.mkdirSync(dir, { recursive: true });
  const json = path.join(dir, 'latest.json');
  const md = path.join(dir, 'latest.md');
  fs.writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  fs.writeFileSync(md, markdown(report));
  return [json, md];
}
