/**
 * A discrete-event simulation of an import's pace on a virtual clock, as the real client runs
 * it: the process's start-up, one event loop (reading a row, dispatching a request and taking
 * its answer each cost CPU there, in turn), a signer of N threads fed by at most `ahead` rows at
 * once while the rest of the rows admitted wait for it (the pre-signing queue: no request yet),
 * the send window (rows admitted while fewer than limit + ahead + backlog are open), the wire's
 * slots, the client's shared 429 pause and retries, the circuit breaker, and a service with a
 * round trip, jitter, its own CPU per request, a token-bucket limit, a cap on concurrent
 * requests and an outage. The parts that decide the pace are the real ones: the adaptive limit
 * (adaptive-limit.ts and the pure controller under it), retryDelay, breakerStep. Everything else
 * mirrors send-window.ts, sender.ts and the service client, with time as a number.
 */
import { createAdaptiveLimit } from '../src/service/adaptive-limit.js';
import { type BreakerState, breakerStep, CLOSED, DEFAULT_BREAKER } from '../src/service/breaker.js';
import { DEFAULT_RETRY, retryDelay } from '../src/service/retry.js';
import { pagesAhead } from '../src/export/page.js';
import { signedBacklog, tellsReady } from '../src/import/send/send-window.js';
import { createRandom } from '../src/sandbox/random.js';

export interface SimService {
  /** Round trip at time t (ms since start): a constant, or a schedule. */
  rttMs: (t: number) => number;
  /** ± uniform, ms. */
  jitterMs: number;
  /** Requests per second (token bucket holding one second), 0 = none. */
  ratePerSecond: number;
  /** Requests on the service at once before it answers 429; 0 = none. */
  maxConcurrent: number;
  /** 503 to everything in [from, to) ms. */
  outage?: { from: number; to: number } | undefined;
  /** Retry-After on a 429, ms. */
  retryAfterMs: number;
  /**
   * Background noise, as the sandbox's faults: a share of requests answered 5xx (500, 502,
   * 503 with Retry-After, 504) or 429 at random, whatever the pace.
   */
  failRate?: number | undefined;
  throttleRate?: number | undefined;
  /**
   * The service's own CPU per request, ms, on one thread (parsing, checking the signature,
   * answering): a burst of requests queues there, and each waits its turn on top of the round trip.
   */
  serverMs?: number | undefined;
}

export interface SimClient {
  /** Signing threads (the machine's cores). */
  cores: number;
  /** CPU per RSA-4096 signature on one thread. */
  signMs: number;
  /** `auto`'s safety bound on requests in flight. */
  bound: number;
  startLimit: number;
  /** A fixed --concurrency instead of `auto`. */
  fixed?: number | undefined;
  /** Rows in the file (none: an endless one); the run ends when the last is answered. */
  rows?: number | undefined;
  /** From the process's start to its first row read: node, the modules, the key, the files. */
  startupMs?: number | undefined;
  /**
   * CPU on the client's one event loop, ms: reading and checking a row, dispatching its request
   * (headers, the body, undici), taking its answer (the reply's checks, the results line). An
   * answer waiting for the loop is counted in flight, and its latency includes the wait.
   */
  loop?: { readMs: number; sendMs: number; answerMs: number } | undefined;
  /** `auto` comes down to what its windows use (ControllerBounds.settle); default true. */
  settle?: boolean | undefined;
  /** The controller is told how many signed rows wait for a slot (Observation.ready); default true. */
  toldReady?: boolean | undefined;
  /** The controller is told how many rows were signed so far (Observation.made); default true. */
  toldMade?: boolean | undefined;
}

export interface SimResult {
  /** Rows created in each second of virtual time. */
  perSecond: number[];
  /** The limit at the end of each second. */
  limits: number[];
  requests: number;
  throttled: number;
  /** Requests sent, and 429s answered, in each second. */
  requestsPerSecond: number[];
  throttledPerSecond: number[];
  failedRows: number;
  /** The most requests on the wire at once in each second (import: rows waiting for a signer or a slot are not counted). */
  peakInFlight: number[];
  /** The most requests at the service at once in each second (arrived, not answered yet): what its own count would show. */
  peakAtService: number[];
  /** With `rows`: when the last row was answered, ms from the process's start. */
  finishedMs?: number | undefined;
  /** Import: where the limit settled, as the summary reports it (the one held for most of the last 1,000 answers). */
  settled?: number | undefined;
}

/** A binary min-heap of timed callbacks; equal times run in insertion order. */
class Timeline {
  #heap: TimedEvent[] = [];
  #seq = 0;
  now = 0;

  at(at: number, run: () => void): void {
    const heap = this.#heap;
    const event: TimedEvent = { at: Math.max(at, this.now), seq: this.#seq++, run };
    // Sift up with a hole: parents move down until the event's place is found.
    let i = heap.length;
    heap.push(event);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = heap[parent]!;
      if (!before(event, above)) break;
      heap[i] = above;
      i = parent;
    }
    heap[i] = event;
  }

  /** Runs events until `until` ms. */
  runUntil(until: number): void {
    const heap = this.#heap;
    while (heap.length > 0 && heap[0]!.at <= until) {
      const top = heap[0]!;
      const last = heap.pop()!;
      if (heap.length > 0) this.#siftDown(last);
      this.now = top.at;
      top.run();
    }
    this.now = until;
  }

  /** Puts `event` at the root's place and moves it down to where it belongs. */
  #siftDown(event: TimedEvent): void {
    const heap = this.#heap;
    const size = heap.length;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= size) break;
      const right = left + 1;
      const child = right < size && before(heap[right]!, heap[left]!) ? right : left;
      const least = heap[child]!;
      if (!before(least, event)) break;
      heap[i] = least;
      i = child;
    }
    heap[i] = event;
  }
}

interface TimedEvent {
  at: number;
  seq: number;
  run: () => void;
}

function before(a: TimedEvent, b: TimedEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}


/**
 * Simulates `seconds` of an import (of `client.rows` rows, or an endless file), as the real
 * client runs it: the send window admits a row while fewer than limit + ahead (+ the signed
 * backlog while `auto` grows) are open; the row is read on the event loop, waits for one of
 * `ahead` signing places (the pre-signing queue), is signed on a thread, then waits for a wire
 * slot; only then, dispatched by the event loop, is it a request in flight.
 */
export function simulateImport(client: SimClient, service: SimService, seconds: number, seed = 1): SimResult {
  const time = new Timeline();
  const random = createRandom(seed);
  const limit = createAdaptiveLimit({ limit: client.fixed ?? 'auto', start: client.startLimit, max: client.bound, now: () => time.now, settle: client.settle ?? true });
  // As the send window: a few rows per core signing at once, and a backlog of signed rows
  // while the limit is still growing.
  const ahead = Math.max(16, 4 * client.cores);
  const backlog = signedBacklog(client.cores);
  const rows = client.rows ?? Number.POSITIVE_INFINITY;
  const cpu = client.loop ?? { readMs: 0, sendMs: 0, answerMs: 0 };
  const loop = new EventLoop(time);
  const result: SimResult = { perSecond: [], limits: [], requests: 0, throttled: 0, requestsPerSecond: [], throttledPerSecond: [], failedRows: 0, peakInFlight: [], peakAtService: [] };

  let admitted = 0;
  let open = 0; // rows admitted and not finished (send-window's `running`)
  let signing = 0; // rows holding one of the `ahead` signing places (its pLimit(ahead))
  const waitingToSign: (() => void)[] = []; // rows admitted, waiting for a signing place
  let threadsBusy = 0;
  let signed = 0; // rows signed so far (the send window's `made`)
  const signQueue: (() => void)[] = [];
  const wire = new WireSlots(time, () => limit.current);
  const server = serviceModel(service, random, time);
  const pause = new Pause();
  let breaker: BreakerState = CLOSED;
  const gateWaiters: (() => void)[] = [];
  let created = 0;
  let finished = 0;
  let peak = 0;

  const admit = () => {
    while (admitted < rows && open < limit.current + ahead + (limit.growing ? backlog : 0)) {
      admitted++;
      open++;
      loop.run(cpu.readMs, () => {
        if (signing < ahead) sign();
        else waitingToSign.push(sign);
      });
    }
  };

  const sign = () => {
    signing++;
    startSigning(() => {
      signing--;
      signed++;
      waitingToSign.shift()?.();
      wire.take(() => loop.run(cpu.sendMs, send));
    });
  };

  const startSigning = (done: () => void) => {
    const job = () => {
      threadsBusy++;
      time.at(time.now + client.signMs, () => {
        threadsBusy--;
        signQueue.shift()?.();
        done();
      });
    };
    if (threadsBusy < client.cores) job();
    else signQueue.push(job);
  };

  const finishRow = () => {
    open--;
    finished++;
    if (finished === rows) result.finishedMs = time.now;
    wire.leave();
    admit();
  };

  const send = () => attempt(1, 0);

  const attempt = (n: number, counted: number) => {
    // As send-request.ts with the send window's slot: waiting for the gate or a 429's pause
    // lends the slot, and a slot taken before the limit was cut queues again.
    const again = () => wire.take(() => attempt(n, counted), true);
    if (breaker.kind === 'open' || breaker.kind === 'probing') {
      wire.leave();
      gateWaiters.push(again);
      return;
    }
    if (!wire.mayGo(pause, again)) return;
    peak = Math.max(peak, wire.held);
    // The answer is taken when the event loop gets to it: until then it holds its slot, and
    // its latency (as send-request.ts measures it) includes the wait.
    request(time, server, result, (status, sentAt, retryAfterMs) => loop.run(cpu.answerMs, () => answered(n, counted, status, sentAt, retryAfterMs)));
  };

  const answered = (n: number, counted: number, status: number, sentAt: number, retryAfterMs: number | undefined) => {
    // As the send window: told unless the reader waits for the window while a signing place is free.
    const readerWaits = admitted < rows && open >= limit.current + ahead + (limit.growing ? backlog : 0);
    const told = tellsReady({ readerWaits, signersBusy: signing >= ahead || waitingToSign.length > 0 });
    limit.observe({ status, ms: time.now - sentAt }, Math.max(1, wire.held), {
      ready: client.toldReady === false || !told ? undefined : wire.waiting + signing,
      made: client.toldMade === false ? undefined : signed,
    });
    const outageStatus = status >= 500;
    if (!outageStatus && (breaker.kind !== 'closed' || breaker.streak !== 0)) moveBreaker(breakerStep(breaker, { type: 'answer' }, DEFAULT_BREAKER));
    if (status === 200) {
      created++;
      return finishRow();
    }
    if (outageStatus && breakerFailed()) return attempt(n + 1, counted);
    if (status === 429) result.throttled++;
    const retry = counted + 1;
    const delay = retry > DEFAULT_RETRY.retries ? undefined : retryDelay({ attempt: retry, retryAfterMs, policy: DEFAULT_RETRY, random: random() });
    if (delay === undefined) {
      result.failedRows++;
      return finishRow();
    }
    if (status === 429) pause.refused(sentAt, time.now, delay);
    // As the send window: the wait lends the wire slot; the retry queues for one again.
    wire.leave();
    time.at(time.now + delay, () => wire.take(() => attempt(n + 1, retry), true));
  };

  /** An outage failure: true when the breaker took it (the request waits at the gate instead of counting a retry). */
  const breakerFailed = (): boolean => {
    const wasClosed = breaker.kind === 'closed';
    moveBreaker(breakerStep(breaker, { type: 'failure', now: time.now, random: random() }, DEFAULT_BREAKER));
    return !(wasClosed && breaker.kind === 'closed');
  };

  const moveBreaker = (next: BreakerState) => {
    const before = breaker;
    breaker = next;
    if (next.kind === 'open' && before !== next) time.at(next.probeAt, probe);
    if (next.kind === 'closed' && before.kind !== 'closed') {
      for (const waiter of gateWaiters.splice(0)) waiter();
    }
  };

  const probe = () => {
    const next = breakerStep(breaker, { type: 'probe', now: time.now }, DEFAULT_BREAKER);
    if (next.kind !== 'probing') return;
    breaker = next;
    const sentAt = time.now;
    time.at(sentAt + server.latency(sentAt), () => {
      if (server.down(sentAt)) moveBreaker(breakerStep(breaker, { type: 'probeFailed', now: time.now, random: random() }, DEFAULT_BREAKER));
      else moveBreaker(breakerStep(breaker, { type: 'answer' }, DEFAULT_BREAKER));
    });
  };

  time.at(client.startupMs ?? 0, admit);
  runSeconds(time, seconds, result, () => created, () => limit.current, () => {
    const most = peak;
    peak = wire.held;
    return most;
  }, () => server.peakPresent(), () => finished >= rows);
  result.settled = limit.limits().settled;
  return result;
}

/**
 * The client's one event loop: each piece of work runs after the one before it has had its CPU
 * (first come, first served), `fn` once its own `ms` are spent.
 */
class EventLoop {
  #freeAt = 0;

  constructor(private readonly time: Timeline) {}

  run(ms: number, fn: () => void): void {
    if (ms <= 0 && this.#freeAt <= this.time.now) return fn();
    this.#freeAt = Math.max(this.#freeAt, this.time.now) + ms;
    this.time.at(this.#freeAt, fn);
  }
}

/** One request to the simulated service, sent now: counted, and answered a round trip (and its turn at the service's CPU) later. */
function request(time: Timeline, server: ServiceModel, result: SimResult, answered: (status: number, sentAt: number, retryAfterMs: number | undefined) => void): void {
  const sentAt = time.now;
  const status = server.admit(sentAt);
  result.requests++;
  time.at(server.answerAt(sentAt), () => {
    server.answered(status);
    answered(status, sentAt, server.retryAfter(status, sentAt));
  });
}

/**
 * The wire's slots, as createWireSlots (service/wire-slots.ts): at most `limit()` held; a request
 * coming back for one (a retry) goes ahead of those not sent yet; a slot taken before the limit
 * was cut no longer fits, and its request queues again.
 */
class WireSlots {
  held = 0;

  /** Requests not sent yet, waiting for a slot (the import's signed rows). */
  get waiting(): number {
    return this.#fresh.length;
  }

  readonly #again: (() => void)[] = [];
  readonly #fresh: (() => void)[] = [];

  constructor(
    private readonly time: Timeline,
    private readonly limit: () => number,
  ) {}

  take(start: () => void, retry = false): void {
    if (this.held < this.limit()) {
      this.held++;
      start();
    } else (retry ? this.#again : this.#fresh).push(start);
  }

  fits(): boolean {
    return this.held <= this.limit();
  }

  /**
   * As send-request.ts's waitForTurn: a request paused by a 429, or holding a slot past a cut
   * limit, lends its slot and comes back for one (`again`); true when it may go now.
   */
  mayGo(pause: Pause, again: () => void): boolean {
    if (pause.until > this.time.now) {
      this.leave();
      this.time.at(pause.until, again);
      return false;
    }
    if (!this.fits()) {
      this.leave();
      again();
      return false;
    }
    return true;
  }

  leave(): void {
    this.held--;
    while (this.held < this.limit() && this.#again.length + this.#fresh.length > 0) {
      this.held++;
      // A turn later, as a promise's waiter resumes: a request that lends its slot at once (a
      // pause) must not serve the queue from inside this loop (thousands of signed rows wait).
      this.time.at(this.time.now, this.#again.shift() ?? this.#fresh.shift()!);
    }
  }
}

/** The client's shared 429 pause, as send-request.ts: a 429 to a request sent before the pause began is its echo, not a new one. */
class Pause {
  until = 0;
  #at = Number.NEGATIVE_INFINITY;

  refused(sentAt: number, now: number, delayMs: number): void {
    if (sentAt < this.#at && this.until > now) return;
    this.until = Math.max(this.until, now + delayMs);
    this.#at = now;
  }
}

type ServiceModel = ReturnType<typeof serviceModel>;

/** The sandbox's random 5xx: one of these, a 503 with Retry-After. */
const NOISE_STATUSES = [500, 502, 503, 504];

/**
 * The simulated service: its round trip with jitter, and what it answers a request arriving at
 * `t`: 503 in an outage, 429 beyond its cap on requests at once or once its token bucket (one
 * second's worth) is empty, then random 429s and 5xx (noise), else 200. Only a request it
 * serves holds one of its places.
 */
function serviceModel(service: SimService, random: () => number, time: Timeline) {
  let atService = 0;
  // Every request there, refused or not, until its answer goes out; the most in this second.
  let present = 0;
  let peakPresent = 0;
  let cpuFreeAt = 0;
  let tokens = service.ratePerSecond;
  let refilledAt = 0;
  const down = (t: number) => service.outage !== undefined && t >= service.outage.from && t < service.outage.to;
  const roll = (rate: number | undefined) => rate !== undefined && rate > 0 && random() < rate;
  return {
    down,
    latency: (t: number) => Math.max(0, service.rttMs(t) + (random() * 2 - 1) * service.jitterMs),
    /** When the answer to a request arriving at `t` goes out: its turn at the service's CPU, then the round trip. */
    answerAt(t: number): number {
      present++;
      peakPresent = Math.max(peakPresent, present);
      const served = service.serverMs ? (cpuFreeAt = Math.max(cpuFreeAt, t) + service.serverMs) : t;
      return Math.max(served, time.now) + Math.max(0, service.rttMs(t) + (random() * 2 - 1) * service.jitterMs);
    },
    peakPresent(): number {
      const most = peakPresent;
      peakPresent = present;
      return most;
    },
    admit(t: number): number {
      if (down(t)) return 503;
      if (service.maxConcurrent > 0 && atService >= service.maxConcurrent) return 429;
      if (service.ratePerSecond > 0) {
        tokens = Math.min(service.ratePerSecond, tokens + ((t - refilledAt) / 1000) * service.ratePerSecond);
        refilledAt = t;
        if (tokens < 1) return 429;
        tokens -= 1;
      }
      if (roll(service.throttleRate)) return 429;
      if (roll(service.failRate)) return NOISE_STATUSES[Math.floor(random() * NOISE_STATUSES.length)]!;
      atService++;
      return 200;
    },
    /** Retry-After, as the sandbox sends it: on every 429, and on a 503 but the outage's. */
    retryAfter(status: number, sentAt: number): number | undefined {
      return status === 429 || (status === 503 && !down(sentAt)) ? service.retryAfterMs : undefined;
    },
    /** The answer to an admitted request went out: a served one leaves its place. */
    answered(status: number): void {
      present--;
      if (status === 200) atService--;
    },
  };
}

export interface SimWriter {
  /** Clients a page. */
  pageSize: number;
  /** Writing one page (CSV text, the disk): the export's own pace. */
  writeMs: number;
  /** `--prefetch auto`'s safety bound on pages requested ahead. */
  bound: number;
  startLimit: number;
  /** A fixed --prefetch instead of `auto`. */
  fixed?: number | undefined;
}

/**
 * Simulates `seconds` of an export of an endless listing, as pageClients (export/page.ts) does
 * it: the first page alone, then, before each page goes to the writer, the pages up to
 * pagesAhead() ahead are requested, at most the limit of them on the wire (wire slots, as the
 * import's); the writer waits for the next one in order. The real controller is fed every
 * answer with the pages on the wire counted busy only while the writer waits (busyPrefetch),
 * and a 429 pauses every request for its Retry-After, as the service client does.
 * `perSecond` counts clients written.
 */
export function simulateExport(writer: SimWriter, service: SimService, seconds: number, seed = 1): SimResult {
  const time = new Timeline();
  const random = createRandom(seed);
  const server = serviceModel(service, random, time);
  const limit = createAdaptiveLimit({ limit: writer.fixed ?? 'auto', start: writer.startLimit, max: writer.bound, now: () => time.now });
  const result: SimResult = { perSecond: [], limits: [], requests: 0, throttled: 0, requestsPerSecond: [], throttledPerSecond: [], failedRows: 0, peakInFlight: [], peakAtService: [] };
  const ready = new Set<number>();
  let requested = 0;
  let waitingFor: number | undefined;
  let written = 0;
  const pause = new Pause();
  const wire = new WireSlots(time, () => limit.current);
  const ahead = () => pagesAhead(limit.current, writer.fixed === undefined, writer.bound);

  const fetchPage = (page: number) => {
    wire.take(() => attempt(page, 0));
  };

  // As send-request.ts with the pager's wire slot: a page waiting out a 429's pause or its
  // retry delay lends its slot, and comes back for one ahead of pages not sent yet.
  const attempt = (page: number, retries: number) => {
    const again = () => wire.take(() => attempt(page, retries), true);
    if (!wire.mayGo(pause, again)) return;
    request(time, server, result, (status, sentAt, retryAfterMs) => {
      // As run-export.ts: busy is busyPrefetch (the pages on the wire while the writer waits),
      // and as many await an answer (this one included).
      limit.observe({ status, ms: time.now - sentAt }, waitingFor === undefined ? 0 : wire.held, { awaiting: wire.held });
      wire.leave();
      if (status === 200) {
        ready.add(page);
        if (waitingFor === page) write(page);
        return;
      }
      if (status === 429) result.throttled++;
      const delay = retryDelay({ attempt: retries + 1, retryAfterMs, policy: DEFAULT_RETRY, random: random() });
      if (delay === undefined) {
        result.failedRows++;
        return;
      }
      if (status === 429) pause.refused(sentAt, time.now, delay);
      time.at(time.now + delay, () => wire.take(() => attempt(page, retries + 1), true));
    });
  };

  const topUp = (upTo: number) => {
    for (; requested <= upTo; requested++) fetchPage(requested);
  };

  /** The writer takes page `number` (arrived): the pages ahead are requested first. */
  const write = (number: number) => {
    waitingFor = undefined;
    ready.delete(number);
    topUp(number + ahead());
    time.at(time.now + writer.writeMs, () => {
      written += writer.pageSize;
      const next = number + 1;
      topUp(next + ahead() - 1);
      if (ready.has(next)) write(next);
      else waitingFor = next;
    });
  };

  // The first page alone: it settles the listing's base and page size.
  waitingFor = 0;
  topUp(0);
  return runSeconds(time, seconds, result, () => written, () => limit.current);
}

/** Runs the timeline second by second, recording into `result` what was done, sent and refused in each, and the limit at its end. */
function runSeconds(
  time: Timeline,
  seconds: number,
  result: SimResult,
  done: () => number,
  limit: () => number,
  peakInFlight: () => number = () => 0,
  peakAtService: () => number = () => 0,
  ended: () => boolean = () => false,
): SimResult {
  for (let second = 1; second <= seconds && !ended(); second++) {
    const before = { done: done(), requests: result.requests, throttled: result.throttled };
    time.runUntil(second * 1000);
    result.perSecond.push(done() - before.done);
    result.requestsPerSecond.push(result.requests - before.requests);
    result.throttledPerSecond.push(result.throttled - before.throttled);
    result.limits.push(limit());
    result.peakInFlight.push(peakInFlight());
    result.peakAtService.push(peakAtService());
  }
  return result;
}

/** What a cell's table row shows of a run against its floor `target`, over `seconds`. */
export interface RunFigures {
  /** The mean pace from start-up's end (or the last third, if it never got there). */
  steady: number;
  reachS: number | undefined;
  /** 429s per request: over the run, and from start-up's end on. */
  throttledShare: number;
  steadyThrottledShare: number;
  limit: number;
  failedRows: number;
  /** The whole run's pace, start-up included. */
  wholeRun: number;
  /** The most requests in flight at once over the last third of the run. */
  lateInFlight: number;
}

export function figuresOf(run: SimResult, target: number, seconds: number): RunFigures {
  const reachS = secondsToReach(run.perSecond, target);
  const from = reachS ?? Math.floor((2 * seconds) / 3);
  const after = run.perSecond.slice(from);
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  return {
    steady: sum(after) / after.length,
    reachS,
    throttledShare: run.throttled / Math.max(1, run.requests),
    steadyThrottledShare: sum(run.throttledPerSecond.slice(from)) / Math.max(1, sum(run.requestsPerSecond.slice(from))),
    limit: run.limits.at(-1)!,
    failedRows: run.failedRows,
    wholeRun: sum(run.perSecond) / run.perSecond.length,
    lateInFlight: Math.max(0, ...run.peakInFlight.slice(Math.floor((2 * seconds) / 3))),
  };
}

/** The export's floor in clients a second: min(writer, limit, cap / round trip, bound / round trip) pages, each `pageSize` clients. */
export function exportCeiling(writer: SimWriter, service: SimService, rttMs: number): number {
  const perRequestS = Math.max(rttMs, 0.001) / 1000;
  const pages = [1000 / writer.writeMs, writer.bound / perRequestS];
  if (service.ratePerSecond > 0) pages.push(service.ratePerSecond);
  if (service.maxConcurrent > 0) pages.push(service.maxConcurrent / perRequestS);
  return Math.min(...pages) * writer.pageSize;
}

/** The pace nothing on the client's side can beat: min(signer, service limit, cap / round trip, bound / round trip). */
export function ceilingRate(client: SimClient, service: SimService, rttMs: number): number {
  const perRequestS = Math.max(rttMs, 0.001) / 1000;
  const candidates = [(client.cores * 1000) / client.signMs, client.bound / perRequestS];
  if (service.ratePerSecond > 0) candidates.push(service.ratePerSecond);
  if (service.maxConcurrent > 0) candidates.push(service.maxConcurrent / perRequestS);
  return Math.min(...candidates);
}

/** Seconds a pace must hold, on average, to count as reached. */
export const HOLD_SECONDS = 10;

/**
 * The first second at which the rate reaches share × target (a 3-second moving mean: seconds
 * are whole, and retry waits make a sawtooth) and holds it on average for HOLD_SECONDS (or to
 * the end of the run): start-up ends there.
 */
export function secondsToReach(perSecond: number[], target: number, share = 0.9): number | undefined {
  const mean = (from: number, to: number) => perSecond.slice(from, to).reduce((a, b) => a + b, 0) / (to - from);
  for (let s = 0; s + 3 <= perSecond.length; s++) {
    if (mean(s, s + 3) >= share * target && mean(s, Math.min(perSecond.length, s + HOLD_SECONDS)) >= share * target) return s;
  }
  return undefined;
}
