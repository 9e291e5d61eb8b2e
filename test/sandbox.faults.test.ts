import { Agent, request } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import { UsageError } from '../src/errors.js';
import { Faults, parseLatencySchedule, parseOutage } from '../src/sandbox/faults.js';
import { type Sandbox, type SandboxOptions, startSandbox } from '../src/sandbox/index.js';
import { call, create, expectErrorShape, validBody } from './sandbox.helpers.js';
import { makeTempDir, runCliInProcess, sandboxEnv, writeKeyFile } from './helpers.js';

/** Starts an unsigned sandbox for one test and always closes it. */
async function withSandbox(options: SandboxOptions, run: (sandbox: Sandbox) => Promise<void>): Promise<void> {
  const sandbox = await startSandbox({ verifySignatures: false, ...options });
  try {
    await run(sandbox);
  } finally {
    await sandbox.close();
  }
}

describe('injected faults', () => {
  it('failRate 1 answers every request with a 5xx api_error, before handling', () =>
    withSandbox({ failRate: 1 }, async (sandbox) => {
      for (let i = 0; i < 12; i++) {
        const answer = await create(sandbox, validBody());
        expect([500, 502, 503, 504]).toContain(answer.status);
        expectErrorShape(answer);
        expect(answer.json.error.type).toBe('api_error');
      }
      expect(sandbox.store.size).toBe(0);
      expect(sandbox.stats.faults.fail).toBe(12);
    }));

  it('checks auth before faults', () =>
    withSandbox({ failRate: 1, throttleRate: 1 }, async (sandbox) => {
      expect((await call(sandbox, '/v1/clients', { token: 'wrong' })).status).toBe(401);
    }));

  it('throttleRate 1 answers 429 rate_limit_error with Retry-After', () =>
    withSandbox({ throttleRate: 1, retryAfterSeconds: 0 }, async (sandbox) => {
      const answer = await call(sandbox, '/v1/clients');
      expect(answer.status).toBe(429);
      expect(answer.headers['retry-after']).toBe('0');
      expect(answer.json.error.type).toBe('rate_limit_error');
      expect(sandbox.stats.faults.throttle).toBe(1);
      sandbox.setFaults({ retryAfterSeconds: 2 });
      expect((await call(sandbox, '/v1/clients')).headers['retry-after']).toBe('2');
    }));

  it('rateLimit lets N requests per second through and 429s the rest', () =>
    withSandbox({ rateLimit: 5 }, async (sandbox) => {
      const answers = await Promise.all(Array.from({ length: 20 }, () => call(sandbox, '/v1/clients')));
      const ok = answers.filter((a) => a.status === 200).length;
      expect(ok).toBeGreaterThanOrEqual(5);
      expect(ok).toBeLessThanOrEqual(6);
      const limited = answers.find((a) => a.status === 429)!;
      expect(limited.headers['retry-after']).toBe('1');
      expect(limited.json.error.code).toBe('rate_limit_exceeded');
      expect(sandbox.stats.faults.rateLimited).toBe(20 - ok);
    }));

  it('rateLimit is a token bucket: spent, it refills at N per second, never past one second of requests', () =>
    withSandbox({ rateLimit: 10 }, async (sandbox) => {
      const burst = async (n: number) =>
        (await Promise.all(Array.from({ length: n }, () => call(sandbox, '/v1/clients')))).filter((a) => a.status === 200).length;
      // A full bucket (10), plus what refills while a burst is answered (slow on a busy machine).
      const within = (ms: number) => 11 + Math.ceil((10 * ms) / 1000);
      const firstStarted = performance.now();
      const first = await burst(30);
      // Half a second later about five tokens are back, not a whole new second's worth. The
      // bounds come from the time that really passed (timers fire late on a busy machine).
      const firstEnded = performance.now();
      expect(first).toBeLessThanOrEqual(within(firstEnded - firstStarted));
      await new Promise((resolve) => setTimeout(resolve, 500));
      const secondStarted = performance.now();
      const refilled = await burst(30);
      const secondEnded = performance.now();
      expect(refilled).toBeGreaterThanOrEqual(Math.floor((10 * (secondStarted - firstEnded)) / 1000) - 1);
      expect(refilled).toBeLessThanOrEqual(Math.min(11, Math.ceil((10 * (secondEnded - firstStarted)) / 1000) + 1));
      // Idle for longer than a second: the bucket holds one second of requests at most.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const thirdStarted = performance.now();
      const third = await burst(30);
      expect(third).toBeLessThanOrEqual(within(performance.now() - thirdStarted));
      const limited = (await call(sandbox, '/v1/clients'));
      expect(limited.status).toBe(429);
      expect(limited.headers['retry-after']).toBe('1');
    }));

  it('latencySchedule changes the latency over time, from the first request', () =>
    // A step far above what a busy machine adds to a local request, so either side is unmistakable.
    withSandbox({ latencySchedule: parseLatencySchedule('0@0,2000@0.3') }, async (sandbox) => {
      const timed = async () => {
        const started = performance.now();
        await call(sandbox, '/v1/clients');
        return performance.now() - started;
      };
      expect(await timed()).toBeLessThan(2000);
      await new Promise((resolve) => setTimeout(resolve, 350));
      expect(await timed()).toBeGreaterThanOrEqual(1990);
    }));

  it('parses --latency-schedule and refuses what it cannot read', () => {
    expect(parseLatencySchedule('20@0, 300@10,20@20.5')).toEqual([
      { latencyMs: 20, atMs: 0 },
      { latencyMs: 300, atMs: 10_000 },
      { latencyMs: 20, atMs: 20_500 },
    ]);
    expect(() => parseLatencySchedule('20ms@0')).toThrow(/MS@SECONDS/);
    expect(() => new Faults({ latencySchedule: [{ atMs: 5, latencyMs: 1 }, { atMs: 1, latencyMs: 2 }] }, 1)).toThrow(
      /increasing atMs/,
    );
  });

  it('dropRate 1 cuts the connection with no response', () =>
    withSandbox({ dropRate: 1 }, async (sandbox) => {
      await expect(call(sandbox, '/v1/clients')).rejects.toThrow();
      expect(sandbox.stats.faults.drop).toBe(1);
      expect(sandbox.stats.byStatus).toEqual({});
    }));

  it('resetRate 1 stores the client, then cuts the connection; the retry replays it', () =>
    withSandbox({ resetRate: 1 }, async (sandbox) => {
      const body = validBody();
      await expect(create(sandbox, body)).rejects.toThrow();
      const stored = sandbox.store.byIdempotencyKey(body.idempotency_key as string);
      expect(stored).toBeDefined();
      expect(sandbox.stats.faults.reset).toBe(1);
      // Only new clients are cut off: the retry (same key, same body) gets its answer.
      const retry = await create(sandbox, body);
      expect(retry.status).toBe(200);
      expect(retry.json.data.id).toBe(stored!.id);
      expect(sandbox.store.size).toBe(1);
    }));

  it('adds latency and jitter', () =>
    withSandbox({ latencyMs: 80, jitterMs: 40 }, async (sandbox) => {
      const started = performance.now();
      await call(sandbox, '/v1/clients');
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(75);
      expect(took).toBeLessThan(1000);
    }));

  it('counts the requests it holds at once: the most since it started, or since restartPeakInFlight()', () =>
    withSandbox({ latencyMs: 100 }, async (sandbox) => {
      const calls = (n: number) => Array.from({ length: n }, () => call(sandbox, '/v1/clients'));
      await Promise.all(calls(5));
      expect(sandbox.peakInFlight).toBe(5);
      expect(sandbox.restartPeakInFlight()).toBe(5);
      expect(sandbox.peakInFlight).toBe(0);
      await Promise.all(calls(2));
      expect(sandbox.peakInFlight).toBe(2);
      // Restarted while three are held: it counts on from them.
      const held = calls(3);
      await vi.waitFor(() => expect(sandbox.inFlight).toBe(3));
      expect(sandbox.restartPeakInFlight()).toBe(3);
      expect(sandbox.peakInFlight).toBe(3);
      await Promise.all(held);
      expect(sandbox.inFlight).toBe(0);
    }));

  it('repeats the same faults for the same seedRandom', async () => {
    const run = async (seedRandom: number) => {
      const statuses: number[] = [];
      await withSandbox({ failRate: 0.3, throttleRate: 0.2, seedRandom }, async (sandbox) => {
        for (let i = 0; i < 40; i++) statuses.push((await call(sandbox, '/v1/clients')).status);
      });
      return statuses;
    };
    const [a, b, c] = [await run(3), await run(3), await run(4)];
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    expect(new Set(a)).toContain(200);
    expect(new Set(a)).toContain(429);
  });

  it('changes faults at runtime and refuses nonsense', () =>
    withSandbox({}, async (sandbox) => {
      expect((await call(sandbox, '/v1/clients')).status).toBe(200);
      sandbox.setFaults({ failRate: 1 });
      expect((await call(sandbox, '/v1/clients')).status).toBeGreaterThanOrEqual(500);
      sandbox.setFaults({ failRate: 0 });
      expect((await call(sandbox, '/v1/clients')).status).toBe(200);
      expect(() => sandbox.setFaults({ failRate: 2 })).toThrow(UsageError);
      expect(() => sandbox.setFaults({ retryAfterSeconds: 0.5 })).toThrow(UsageError);
      expect(sandbox.faults.failRate).toBe(0);
      expect(sandbox.stats.requests).toBe(3);
      expect(sandbox.stats.byStatus[200]).toBe(2);
    }));

  it('refuses bad options with a UsageError', async () => {
    await expect(startSandbox({ dropRate: -1 })).rejects.toThrow(UsageError);
    await expect(startSandbox({ verifySignatures: false, maxPageSize: 0 })).rejects.toThrow(UsageError);
    await expect(startSandbox({ verifySignatures: false, token: 'has space' })).rejects.toThrow(UsageError);
  });
});

describe('logging and closing', () => {
  it('logs one line per request without the token or the signature', async () => {
    const lines: string[] = [];
    await withSandbox({ log: (line) => lines.push(line) }, async (sandbox) => {
      await create(sandbox, validBody(), { headers: { 'x-signature': 'c2VjcmV0' } });
      await call(sandbox, '/v1/clients?size=1');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^POST \/v1\/client 200 \d+ms req_/);
      expect(lines.join('\n')).not.toContain(sandbox.token);
      expect(lines.join('\n')).not.toContain('c2VjcmV0');
    });
  });

  it('closes promptly with an idle keep-alive connection and a request asleep in latency', async () => {
    const sandbox = await startSandbox({ verifySignatures: false });
    const agent = new Agent({ keepAliveTimeout: 60_000 });
    try {
      expect((await call(sandbox, '/v1/clients', { dispatcher: agent })).status).toBe(200);
      sandbox.setFaults({ latencyMs: 30_000 });
      const pending = request(`${sandbox.url}/v1/clients`, {
        headers: { authorization: `Bearer ${sandbox.token}` },
        dispatcher: agent,
      }).catch((error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = performance.now();
      await sandbox.close();
      // Not the 30 s the request sleeps for, nor keep-alive's 60 s.
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(await pending).toBeInstanceOf(Error);
      await sandbox.close(); // idempotent
    } finally {
      await agent.close();
    }
  });
});

describe("the outage's clock", () => {
  const window = { atMs: 0, forMs: 600_000, kind: '503' as const };

  it('from: {creates: N}: every request is served until the Nth client is created, then the outage starts', () =>
    withSandbox({ outage: { ...window, from: { creates: 3 } } }, async (sandbox) => {
      for (let i = 0; i < 3; i++) {
        expect((await call(sandbox, '/v1/clients')).status).toBe(200);
        expect((await create(sandbox, validBody())).status).toBe(200);
      }
      const down = await create(sandbox, validBody());
      expect(down.status).toBe(503);
      expect(down.json.error.code).toBe('service_unavailable');
      expect(sandbox.store.size).toBe(3);
      expect(sandbox.stats.faults.outage).toBe(1);
    }));

  it("from: 'start' counts from the sandbox's start, whoever asks first", () =>
    withSandbox({ outage: { ...window, from: 'start' } }, async (sandbox) => {
      expect((await call(sandbox, '/v1/clients', { headers: { 'user-agent': 'ccs-bulk check' } })).status).toBe(503);
    }));

  it("ccs-bulk check's requests do not start the default clock; a run's first request does", () =>
    withSandbox({ outage: window }, async (sandbox) => {
      const check = { headers: { 'user-agent': 'ccs-bulk check' } };
      expect((await call(sandbox, '/v1/clients', check)).status).toBe(200);
      expect((await call(sandbox, '/v1/clients', check)).status).toBe(200);
      expect(sandbox.stats.faults.outage).toBe(0);
      expect((await call(sandbox, '/v1/clients')).status).toBe(503);
      // Once it runs, the outage is the whole service's: check's requests fail too.
      expect((await call(sandbox, '/v1/clients', check)).status).toBe(503);
    }));

  it('parses --outage with --outage-from-start or --outage-after-creates, and refuses both or nonsense', () => {
    expect(parseOutage('30:60')).toEqual({ atMs: 30_000, forMs: 60_000, kind: '503' });
    expect(parseOutage('0:30:drop', { afterCreates: 100 })).toEqual({ atMs: 0, forMs: 30_000, kind: 'drop', from: { creates: 100 } });
    expect(parseOutage('5:30', { fromStart: true })).toEqual({ atMs: 5000, forMs: 30_000, kind: '503', from: 'start' });
    expect(() => parseOutage('5:30', { fromStart: true, afterCreates: 3 })).toThrow(/exclude each other/);
    expect(() => new Faults({ outage: { ...window, from: { creates: 0 } } }, 1)).toThrow(UsageError);
    expect(() => new Faults({ outage: { ...window, from: { creates: 1.5 } } }, 1)).toThrow(UsageError);
  });
});

describe('ccs-bulk check against a sandbox with an outage set', () => {
  it('passes and leaves the clock alone: the outage starts with the run that follows', async () => {
    const sandbox = await startSandbox({ outage: { atMs: 0, forMs: 600_000, kind: '503' } });
    const temp = await makeTempDir();
    try {
      const env = sandboxEnv(sandbox, await writeKeyFile(temp.dir, sandbox.privateKeyPem));
      const run = await runCliInProcess(['check'], { env });
      expect(run.code, run.stderr + run.stdout).toBe(0);
      expect(sandbox.stats.faults.outage).toBe(0);
      expect(sandbox.stats.requests).toBeGreaterThan(0);
      expect((await call(sandbox, '/v1/clients')).status).toBe(503);
    } finally {
      await sandbox.close();
      await temp.cleanup();
    }
  });
});
