import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createAccessLogger, RequestLogger } from '../../src/http/request-logger.js';
import { createLogger } from '../../src/log.js';

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
  it('writes to the main logger destination with the service name', () => {
    const { lines, log } = capture();
    createAccessLogger(log).info({ reqId: 'req_4', status: 200 }, 'request');
    expect(lines).toEqual([expect.objectContaining({ service: 'kosh', reqId: 'req_4', status: 200 })]);
  });
});
