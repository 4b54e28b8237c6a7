import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/http/metrics.js';

describe('metrics', () => {
  it("counts each server's requests apart and shares one set of the process's series", async () => {
    const first = createMetrics();
    const second = createMetrics();
    first.requestDuration.observe({ method: 'GET', route: '/healthz', status: '200' }, 0.002);

    const firstText = (await first.render()).text;
    const secondText = (await second.render()).text;
    expect(firstText).toContain(
      'kosh_http_request_duration_seconds_count{method="GET",route="/healthz",status="200"} 1',
    );
    expect(secondText).not.toContain('route="/healthz"');
    for (const text of [firstText, secondText]) {
      expect(text).toContain('process_cpu_user_seconds_total');
      expect(text).toContain('nodejs_eventloop_lag_seconds');
    }
    // Both servers render the same process series objects: one event-loop monitor, one GC observer.
    const processLag = (metrics: typeof first) =>
      metrics.registry.getSingleMetric('nodejs_eventloop_lag_seconds');
    expect(processLag(first)).toBeDefined();
    expect(processLag(first)).toBe(processLag(second));
  });
});
