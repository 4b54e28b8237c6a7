import { spawn } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAccessLogger, RequestLogger } from '../../src/http/request-logger.js';
import { createLogger } from '../../src/log.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Runs a command from the repository's root: how it ended, and its standard output as JSON lines. */
async function jsonLinesOf(command: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (exitCode, killedBy) => resolve([exitCode, killedBy])),
  );
  const lines = output
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { code, signal, lines };
}

/** Runs a TypeScript module given as text, as `node --eval` would, from the repository's root. */
const runModule = (text: string) =>
  jsonLinesOf(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', text]);

function capture() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, log: createLogger('info', sink) };
}

describe('RequestLogger', () => {
  it('makes no child logger until a line is written, then writes with every binding', () => {
    const { lines, log } = capture();
    const child = vi.spyOn(log, 'child');
    const logger = new RequestLogger(log, { reqId: 'req_1' });
    logger.bind({ account_id: 'mid_1', mode: 'test' });
    logger.debug('below the level');
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);

    logger.info({ merchant_id: 'mid_2' }, 'bank details submitted');
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines).toEqual([
      expect.objectContaining({
        reqId: 'req_1',
        account_id: 'mid_1',
        mode: 'test',
        merchant_id: 'mid_2',
        msg: 'bank details submitted',
        level: 30,
      }),
    ]);
  });

  it('keeps the main logger redaction for what a request logs', () => {
    const { lines, log } = capture();
    new RequestLogger(log, { reqId: 'req_2' }).warn({ secret_key: 'sk_test_x' }, 'careful');
    expect(lines[0]).toMatchObject({ reqId: 'req_2', secret_key: '[redacted]' });
  });

  it('honours a level set on it, as a child would', () => {
    const { lines, log } = capture();
    const logger = new RequestLogger(log, { reqId: 'req_3' });
    logger.level = 'error';
    logger.warn('dropped');
    logger.error('kept');
    expect(lines.map((line) => line.msg)).toEqual(['kept']);
    expect(logger.level).toBe('error');
  });
});

describe('access logger', () => {
  it('writes to the main logger destination the line pino would write, leaving out what is absent', () => {
    const entries = [
      { reqId: 'req_4', method: 'GET', url: '/v1/orders/?receipt="a\\b"\u00e9', status: 200, ms: 1.25 },
      {
        reqId: 'req_5',
        account_id: 'mid_1',
        mode: 'test',
        method: 'POST',
        url: '/v1/orders/',
        status: 201,
        ms: 3,
      },
    ];
    const { lines, log } = capture();
    const access = createAccessLogger(log);
    const before = Date.now();
    for (const entry of entries) access.write(entry);
    // The same line as pino writes for the same fields: same keys in the same order, same values.
    const { lines: pinoLines, log: pinoLog } = capture();
    for (const entry of entries) pinoLog.info(entry, 'request');
    expect(lines).toHaveLength(2);
    lines.forEach((line, index) => {
      const expected = pinoLines[index]!;
      expect(Object.keys(line)).toEqual(Object.keys(expected));
      expect({ ...line, time: 0 }).toEqual({ ...expected, time: 0 });
      expect(line.time as number).toBeGreaterThanOrEqual(before);
    });
    expect(lines[0]).toMatchObject({ service: 'kosh', level: 30, msg: 'request', url: entries[0]!.url });
    expect(lines[0]).not.toHaveProperty('account_id');
  });

  it('writes nothing when the main logger is above info', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    createAccessLogger(createLogger('warn', sink)).write({
      reqId: 'r',
      method: 'GET',
      url: '/',
      status: 200,
      ms: 1,
    });
    expect(lines).toEqual([]);
  });

  it('buffered: lines of several processes on one pipe arrive whole, and none is lost at exit', async () => {
    // Two processes write to the same pipe, as cluster workers share the service's stdout; each
    // line is longer than a few hundred bytes, so chunks of whole lines are what keeps them apart.
    const writer = [
      "import { createAccessLogger } from './src/http/request-logger.ts';",
      "import { createLogger } from './src/log.ts';",
      "const access = createAccessLogger(createLogger('info'), { buffered: true });",
      "const padding = 'x'.repeat(300);",
      'for (let i = 0; i < 3000; i++) access.write({ reqId: process.argv[1], method: "GET", url: padding, status: i, ms: 1 });',
      'process.exit(0);',
    ].join(' ');
    const tsx = path.join(ROOT, 'node_modules/.bin/tsx');
    const one = (name: string) => `'${tsx}' --eval "$WRITER" ${name}`;
    const { code, lines } = await jsonLinesOf('sh', ['-c', `${one('a')} & ${one('b')} & wait`], {
      ...process.env,
      WRITER: writer,
    });
    expect(code).toBe(0);
    for (const writerName of ['a', 'b']) {
      const numbers = lines.filter((line) => line.reqId === writerName).map((line) => line.status);
      expect(numbers).toEqual(Array.from({ length: 3000 }, (_, i) => i));
    }
    expect(lines.every((line) => line.msg === 'request')).toBe(true);
  }, 30_000);

  it('buffered: a gathered line is written within a second, so a kill -9 loses at most that second', async () => {
    // One line, far below a chunk; the process then kills itself without running its exit handlers.
    const writer = [
      "import { createAccessLogger } from './src/http/request-logger.ts';",
      "import { createLogger } from './src/log.ts';",
      "const access = createAccessLogger(createLogger('info'), { buffered: true });",
      'access.write({ reqId: "killed", method: "GET", url: "/", status: 200, ms: 1 });',
      "setTimeout(() => process.kill(process.pid, 'SIGKILL'), 1_500);",
    ].join(' ');
    const { signal, lines } = await runModule(writer);
    expect(signal).toBe('SIGKILL');
    expect(lines.map((line) => line.reqId)).toEqual(['killed']);
  }, 30_000);
});

describe('main logger', () => {
  it('has written each warning when the call returns, so a kill -9 right after loses none', async () => {
    // 200 warnings in a row: written asynchronously, the later ones would still be waiting for the
    // first write to finish when the process is killed.
    const writer = [
      "import { createLogger } from './src/log.ts';",
      'const log = createLogger("info");',
      "for (let step = 0; step < 200; step++) log.warn({ step }, 'careful');",
      "process.kill(process.pid, 'SIGKILL');",
    ].join(' ');
    const { signal, lines } = await runModule(writer);
    expect(signal).toBe('SIGKILL');
    expect(lines.map((line) => line.step)).toEqual(Array.from({ length: 200 }, (_, step) => step));
    expect(lines.every((line) => line.level === 40 && line.msg === 'careful')).toBe(true);
  }, 30_000);
});

describe('buffered access lines', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const entry = (index: number, url = '/') => ({
    reqId: `req_${index}`,
    method: 'GET',
    url,
    status: 200,
    ms: 1,
  });

  /** A buffered access logger on a faked clock whose chunks are kept (or refused while `refusing`). */
  function gathering(refusing: () => boolean = () => false) {
    vi.useFakeTimers();
    const chunks: string[] = [];
    const access = createAccessLogger(createLogger('info'), {
      buffered: true,
      chunkWriter: (chunk) => {
        if (refusing()) throw new Error('refused');
        chunks.push(chunk);
      },
    });
    return { chunks, access };
  }

  it('writes a gathered line at the next once-a-second tick, not before, and only once', () => {
    const { chunks, access } = gathering();
    access.write(entry(1));
    vi.advanceTimersByTime(999);
    expect(chunks).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(chunks.map((chunk) => JSON.parse(chunk).reqId)).toEqual(['req_1']);
    access.flush();
    vi.advanceTimersByTime(5_000);
    expect(chunks).toHaveLength(1);
  });

  it('writes whole lines in order, in chunks of at most 4,096 bytes; a longer line goes alone', () => {
    const { chunks, access } = gathering();
    for (let index = 0; index < 100; index++) {
      access.write(entry(index, `/${(index % 7 === 0 ? 'é' : 'x').repeat(index % 5 === 0 ? 600 : 40)}`));
    }
    access.write(entry(100, `/${'y'.repeat(5_000)}`));
    access.write(entry(101));
    access.flush();
    expect(chunks.length).toBeGreaterThan(10);
    const long = chunks.filter((chunk) => Buffer.byteLength(chunk) > 4_096);
    expect(long.map((chunk) => chunk.split('\n').filter(Boolean).length)).toEqual([1]);
    for (const chunk of chunks) expect(chunk.endsWith('\n')).toBe(true);
    const ids = chunks.flatMap((chunk) =>
      chunk
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line).reqId as string),
    );
    expect(ids).toEqual(Array.from({ length: 102 }, (_, index) => `req_${index}`));
  });

  it('keeps the line that did not fit when writing the full chunk throws', () => {
    let refuse = true;
    const { chunks, access } = gathering(() => refuse);
    const url = `/${'x'.repeat(1_000)}`;
    // Lines of about 1.1 KB: the one that does not fit in the chunk makes the chunk's write throw.
    let thrownAt = -1;
    for (let index = 0; index < 10 && thrownAt < 0; index++) {
      try {
        access.write(entry(index, url));
      } catch (error) {
        expect((error as Error).message).toBe('refused');
        thrownAt = index;
      }
    }
    expect(thrownAt).toBeGreaterThan(0);
    refuse = false;
    access.flush();
    expect(chunks.map((chunk) => JSON.parse(chunk).reqId)).toEqual([`req_${thrownAt}`]);
  });
});
