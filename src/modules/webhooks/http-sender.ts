import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { Db } from '../../db/db.js';
import type { Mode } from '../../domain/scope.js';
import { checkUrlShape, guardedLookup, type Resolver } from './url-safety.js';

/** Only this much of a receiver's answer is kept in the attempt log. */
export const RESPONSE_BODY_LIMIT = 2_048;

export interface SendResult {
  statusCode: number | undefined;
  latencyMs: number;
  /** The first 2 KiB of the response body. */
  responseBody: string | undefined;
  retryAfter: string | undefined;
  /** Why no HTTP status came back (timeout, refused address, connection error). */
  error: string | undefined;
}

export interface SendRequest {
  url: string;
  mode: Mode;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

export type Sender = (request: SendRequest) => Promise<SendResult>;

/**
 * POSTs one webhook. Redirects are never followed (a 3xx is just an unsuccessful status) and the
 * address is checked again at connect time through `guardedLookup`, so the URL rules hold for the
 * socket actually opened. A fresh connection per request (agent: false) keeps that check honest.
 */
export function createHttpSender(
  resolver: Resolver,
  db: Pick<Db, 'assertNoTransaction'>,
  options: { allowLoopback: boolean } = { allowLoopback: true },
): Sender {
  return (request) => {
    db.assertNoTransaction('webhook send');
    return new Promise<SendResult>((resolve) => {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const fail = (error: string) =>
        resolve({
          statusCode: undefined,
          latencyMs: elapsed(),
          responseBody: undefined,
          retryAfter: undefined,
          error,
        });
      let url: URL;
      try {
        url = checkUrlShape(request.url, { mode: request.mode, allowLoopback: options.allowLoopback }).url;
      } catch (error) {
        fail((error as Error).message);
        return;
      }
      const client = url.protocol === 'https:' ? https : http;
      const outgoing = client.request(url, {
        method: 'POST',
        agent: false,
        lookup: guardedLookup({ mode: request.mode, allowLoopback: options.allowLoopback }, resolver),
        headers: {
          ...request.headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(request.body)),
          'user-agent': 'Kosh-Webhooks/1',
        },
      });
      // One deadline for connecting, sending and the answer's status. A status that came in time
      // is the answer, however slowly its body follows: the body is read only for the attempt log.
      let answer: { response: http.IncomingMessage; chunks: Buffer[] } | undefined;
      const timer = setTimeout(() => {
        if (answer) answered();
        outgoing.destroy(new Error(`timed out after ${request.timeoutMs} ms`));
      }, request.timeoutMs);
      let settled = false;
      const finish = (result: SendResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const answered = () => {
        if (!answer) return;
        const { response, chunks } = answer;
        const retryAfter = response.headers['retry-after'];
        finish({
          statusCode: response.statusCode,
          latencyMs: elapsed(),
          responseBody: logText(Buffer.concat(chunks)),
          retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
          error: undefined,
        });
        response.destroy();
      };
      outgoing.on('error', (error) => {
        // A connection that breaks after the status came has answered with that status.
        if (answer) {
          answered();
          return;
        }
        finish({
          statusCode: undefined,
          latencyMs: elapsed(),
          responseBody: undefined,
          retryAfter: undefined,
          error: error.message || String(error),
        });
      });
      outgoing.on('response', (response) => {
        answer = { response, chunks: [] };
        const { chunks } = answer;
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= RESPONSE_BODY_LIMIT) answered();
        });
        response.on('end', answered);
        response.on('error', answered);
      });
      outgoing.end(request.body);
    });
  };
}

/**
 * The answer's first 2 KiB as text the database can store: invalid UTF-8 becomes U+FFFD, and NUL,
 * which PostgreSQL's text refuses, is dropped (a receiver's answer must never fail the record of
 * its attempt).
 */
function logText(body: Buffer): string {
  return body.subarray(0, RESPONSE_BODY_LIMIT).toString('utf8').replaceAll('\u0000', '');
}
