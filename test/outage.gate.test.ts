import { describe, expect, it } from 'vitest';
import type { BreakerPolicy } from '../src/service/breaker.js';
import { createOutageGate, type OutageEvent } from '../src/service/outage.js';

// Short waits: the gate runs with real timers; the clock it reads is the one moved apart.
const policy: BreakerPolicy = { failureThreshold: 2, firstProbeMs: 20, maxProbeMs: 40, outageTimeoutMs: 60_000 };

/**
 * Node may fire a timer before Date.now() reaches the time it was set for (its timers count
 * from the event loop's cached time, taken when the loop turn began, so a timer set late in
 * a busy turn is due early by the wall clock). Here every probe timer fires `earlyMs` early,
 * every time, rather than now and then.
 */
function gateWith(earlyMs: number, probeAnswers: (string | undefined)[]) {
  const events: OutageEvent[] = [];
  let probes = 0;
  const gate = createOutageGate({
    policy,
    setTimer: (run, ms) => setTimeout(run, Math.max(0, ms - earlyMs)),
    random: () => 0.5,
    onEvent: (event) => events.push(event),
    probe: async () => probeAnswers[probes++] ?? undefined,
  });
  return { gate, events, probes: () => probes };
}

/** Settles with the waiter's fate, or 'still waiting' once `ms` have passed (a deadline, not a sleep). */
function settled(wait: Promise<void>, ms: number): Promise<string> {
  return new Promise((resolve) => {
    const deadline = setTimeout(() => resolve('still waiting'), ms);
    wait.then(
      () => {
        clearTimeout(deadline);
        resolve('resumed');
      },
      (error: Error) => {
        clearTimeout(deadline);
        resolve(`rejected: ${error.message}`);
      },
    );
  });
}

describe('the outage gate when a timer fires before the probe is due', () => {
  it.each<[string, number, (string | undefined)[], number]>([
    ['the timer fires on time', 0, [undefined], 1],
    ['the timer fires 1 ms early', 1, [undefined], 1],
    ['the timer fires 3 ms early', 3, [undefined], 1],
    ['the timer fires 1 ms early, two probes fail first', 1, ['HTTP 503', 'HTTP 503', undefined], 3],
    ['the timer fires 15 ms early (a long busy turn), one probe fails first', 15, ['HTTP 503', undefined], 2],
    ['the timer fires late', -5, ['HTTP 503', undefined], 2],
  ])('%s: the probe still goes and the waiting request resumes', async (_name, earlyMs, answers, probes) => {
    const { gate, events, probes: probed } = gateWith(earlyMs, answers);
    expect(gate.ready(undefined)).toBeUndefined();
    gate.failed('HTTP 503');
    gate.failed('HTTP 503');
    const wait = gate.ready(undefined);
    expect(wait).toBeInstanceOf(Promise);
    // Generous: each probe is due within 40 ms; a loaded machine may be slower, never stuck.
    expect(await settled(wait!, 30_000)).toBe('resumed');
    expect(probed()).toBe(probes);
    expect(events.map((e) => e.type)).toEqual(['paused', ...answers.slice(0, -1).map(() => 'probeFailed'), 'resumed']);
    gate.close();
  });

  it('a request that starts waiting while the breaker is open always has a timer to wake it', async () => {
    const { gate } = gateWith(1, [undefined]);
    gate.failed('HTTP 503');
    gate.failed('HTTP 503');
    const waits = [gate.ready(undefined)!, gate.ready(undefined)!, gate.ready(undefined)!];
    // The Timeout is what holds the process (a promise alone does not).
    expect(process.getActiveResourcesInfo()).toContain('Timeout');
    expect(await Promise.all(waits.map((w) => settled(w, 30_000)))).toEqual(['resumed', 'resumed', 'resumed']);
    gate.close();
  });
});
