import { describe, expect, it } from 'vitest';
import {
  type BreakerEvent,
  type BreakerPolicy,
  type BreakerState,
  breakerStep,
  CLOSED,
  probeDelay,
} from '../src/service/breaker.js';
import { type ConnectionFacts, diagnoseNetworkError } from '../src/service/diagnose.js';

const policy: BreakerPolicy = { failureThreshold: 3, firstProbeMs: 1000, maxProbeMs: 8000, outageTimeoutMs: 60_000 };

const closed = (streak: number): BreakerState => ({ kind: 'closed', streak });
const open = (since: number, probes: number, probeAt: number): BreakerState => ({ kind: 'open', since, probes, probeAt });
const probing = (since: number, probes: number): BreakerState => ({ kind: 'probing', since, probes });
const fail = (now: number, random = 0.5): BreakerEvent => ({ type: 'failure', now, random });
const probeFailed = (now: number, random = 0.5): BreakerEvent => ({ type: 'probeFailed', now, random });

describe('breakerStep', () => {
  it.each<[string, BreakerState, BreakerEvent, BreakerState]>([
    ['an answer keeps it closed', closed(0), { type: 'answer' }, CLOSED],
    ['an answer ends a streak', closed(2), { type: 'answer' }, CLOSED],
    ['a failure adds to the streak', closed(0), fail(10), closed(1)],
    ['below the threshold it stays closed', closed(1), fail(10), closed(2)],
    // 3rd failure in a row: open, first probe after 1000 ms × (0.5 + 0.5·0.5) = 750
    ['the threshold opens it, first probe scheduled', closed(2), fail(10), open(10, 0, 760)],
    ['failures of requests in flight while open change nothing', open(10, 0, 760), fail(20), open(10, 0, 760)],
    ['a request in flight that gets through closes it', open(10, 0, 760), { type: 'answer' }, CLOSED],
    ['no probe before it is due', open(10, 0, 760), { type: 'probe', now: 700 }, open(10, 0, 760)],
    ['the probe goes when due', open(10, 0, 760), { type: 'probe', now: 760 }, probing(10, 1)],
    ['a successful probe closes it', probing(10, 1), { type: 'answer' }, CLOSED],
    ['a stray failure while probing changes nothing', probing(10, 1), fail(900), probing(10, 1)],
    // 2nd probe: ceiling 2000 → 1500 at random 0.5
    ['a failed probe reopens it with a longer wait', probing(10, 1), probeFailed(800), open(10, 1, 2300)],
    // 5th probe would be 16000 capped at 8000 → 6000
    ['the wait between probes is capped', probing(10, 4), probeFailed(20_000), open(10, 4, 26_000)],
    ['the last probe is due at the outage deadline, not after', probing(0, 4), probeFailed(57_000), open(0, 4, 60_000)],
    ['a failed probe at the deadline stops it', probing(0, 5), probeFailed(60_000), { kind: 'stopped', since: 0, at: 60_000 }],
    ['stopped absorbs answers', { kind: 'stopped', since: 0, at: 1 }, { type: 'answer' }, { kind: 'stopped', since: 0, at: 1 }],
    ['a probe event while closed changes nothing', closed(1), { type: 'probe', now: 5 }, closed(1)],
    ['a probe failure while closed changes nothing', closed(1), probeFailed(5), closed(1)],
  ])('%s', (_name, state, event, expected) => {
    expect(breakerStep(state, event, policy)).toEqual(expected);
  });

  it('a full outage: opens, probes with growing waits, stops at the timeout', () => {
    let state: BreakerState = CLOSED;
    let now = 0;
    for (let i = 0; i < 3; i++) state = breakerStep(state, fail(now), policy);
    const waits: number[] = [];
    while (state.kind === 'open') {
      waits.push(state.probeAt - now);
      now = state.probeAt;
      state = breakerStep(breakerStep(state, { type: 'probe', now }, policy), probeFailed(now), policy);
    }
    expect(state).toEqual({ kind: 'stopped', since: 0, at: 60_000 });
    expect(waits.slice(0, 5)).toEqual([750, 1500, 3000, 6000, 6000]);
    expect(waits.length).toBeLessThan(15);
  });
});

describe('probeDelay (equal jitter: never less than half the ceiling)', () => {
  it.each([
    [0, 0, 500],
    [0, 0.999, 1000],
    [1, 0, 1000],
    [3, 0.5, 6000],
    [10, 0, 4000],
  ])('probe %i, random %f → %i ms', (probes, random, expected) => {
    expect(probeDelay(probes, policy, random)).toBe(expected);
  });
});

describe('diagnoseNetworkError', () => {
  const facts: ConnectionFacts = { origin: 'https://api.example.com', proxy: undefined, answered: false };
  const error = (code: string, message = code) => Object.assign(new Error(message), { code });
  it.each<[string, Error, ConnectionFacts, string, boolean, RegExp]>([
    ['untrusted certificate', error('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), facts, 'tls', true, /--ca-file.*NODE_EXTRA_CA_CERTS/],
    ['self-signed in chain, even after answers', error('SELF_SIGNED_CERT_IN_CHAIN'), { ...facts, answered: true }, 'tls', true, /--ca-file/],
    ['expired certificate', error('CERT_HAS_EXPIRED'), facts, 'tls', true, /clock/],
    ['wrong host name', error('ERR_TLS_CERT_ALTNAME_INVALID'), facts, 'tls', true, /host name/],
    ['plain HTTP on the port', error('ERR_SSL_WRONG_VERSION_NUMBER'), facts, 'tls', true, /base URL/],
    ['client certificate required', error('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED'), facts, 'tls', true, /--client-cert/],
    ['DNS before any answer', error('ENOTFOUND'), facts, 'dns', true, /base URL.*--proxy/],
    ['DNS after answers: an outage', error('EAI_AGAIN'), { ...facts, answered: true }, 'dns', false, /base URL/],
    ['refused before any answer', error('ECONNREFUSED'), facts, 'refused', true, /base URL/],
    ['refused after answers: an outage', error('ECONNREFUSED'), { ...facts, answered: true }, 'refused', false, /base URL/],
    ['proxy down', error('ECONNREFUSED'), { ...facts, proxy: 'http://proxy:3128' }, 'proxy', true, /--proxy/],
    ['proxy wants credentials, always', new Error('Proxy response (407) !== 200 when HTTP Tunneling'), { ...facts, answered: true }, 'proxy', true, /USER:PASSWORD/],
    ['proxy refuses the tunnel', new Error('Proxy response (403) !== 200 when HTTP Tunneling'), facts, 'proxy', true, /NO_PROXY/],
    ['a reset is transient', error('ECONNRESET'), facts, 'transient', false, /^$/],
  ])('%s', (_name, err, given, kind, systemic, fix) => {
    const diagnosis = diagnoseNetworkError(err, given);
    expect(diagnosis.kind).toBe(kind);
    expect(diagnosis.systemic).toBe(systemic);
    expect(diagnosis.fix).toMatch(fix);
  });
});
