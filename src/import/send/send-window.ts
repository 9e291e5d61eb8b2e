/**
 * Bounded sending with backpressure, in two stages: signing, then the wire. `concurrency`
 * requests may be on the wire at once, `ahead` rows are signed at once, and up to `backlog`
 * more wait, signed, for a wire slot. Signing (milliseconds of CPU in the thread pool) so never
 * holds a wire slot: with service latency, every slot is busy while the next bodies are signed.
 * And while `auto` is still growing the wire's limit (it doubles once a round trip at first),
 * the signer does not wait for it: the rows it signs meanwhile go out as the limit grows. Once
 * anything pushed back (a 429, 5xx, a rise in latency), the backlog is closed: signed rows
 * waiting through a 429's pause would keep every slot busy after it and read to the controller
 * as room to grow. The controller is told how many signed rows wait for a slot (tellsReady):
 * once they fall from one round trip to the next, twice in a row, the wire takes rows faster
 * than they are signed, and the limit grows no further while they drain. The backlog stays
 * open then: the signer, now the bound, goes on signing at its pace while what it signed ahead
 * goes out.
 * `slot()` resolves only when the window has room, so the reader pauses while it is full
 * and memory stays flat whatever the file size. With `concurrency: 'auto'` the wire's limit
 * follows the adaptive limit (service/adaptive-limit.ts), fed every attempt's answer through `observe`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import { createAdaptiveLimit, type LimitReport } from '../../service/adaptive-limit.js';
import type { Answer } from '../../service/client.js';
import { type PaceMemory, recall, remember, rememberedStart } from '../../service/pace-memory.js';
import type { WireSlot } from '../../service/types.js';
import { createWireSlots } from '../../service/wire-slots.js';

export interface SendWindow {
  /** Waits for room in the window. */
  slot(): Promise<void>;
  /** Starts a row's task; it goes through `signing` and `wire` below. */
  run(task: () => Promise<void>): void;
  /** Runs `work` as one of at most `ahead` signatures in flight. */
  signing<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Runs `work` as one of at most `concurrency` requests on the wire, `rate` a second at most.
   * `work` may lend its slot while it waits (the service client does, given it as `slot`).
   */
  wire<T>(work: (slot: WireSlot) => Promise<T>): Promise<T>;
  /** Waits for everything submitted. */
  drain(): Promise<void>;
  /** An attempt's answer (service client's watchAnswers): `auto` adapts the wire limit to it. */
  observe(answer: Answer): void;
  /** The wire limit now and where it settled (the most held over the last answers). */
  limits(): LimitReport;
  /** Requests on the wire now. */
  inFlight(): number;
}

export interface SendWindowOptions {
  /** Requests on the wire: a fixed number, or `auto` (adapted, from `start` up to `max`). */
  concurrency: number | 'auto';
  /** `auto`'s bounds. */
  maxConcurrency?: number | undefined;
  startConcurrency?: number | undefined;
  /** Rows being signed at once: a few per core keeps the thread pool busy. */
  ahead: number;
  /**
   * Rows signed and waiting for a wire slot, at most, until `auto` first cuts its limit (a 429,
   * 5xx or timeouts, a rise in latency); default 0.
   */
  backlog?: number | undefined;
  /** Sends per second, at most. */
  rate?: number | undefined;
  /** Ctrl-C: cuts a rate-limit wait short; `work` then sees it aborted. */
  signal?: AbortSignal | undefined;
  /**
   * `auto` only: where runs against this service settled (pace-memory.ts). The run starts at
   * half of it, and leaves where it settled for the next once drained.
   */
  paceMemory?: PaceMemory | undefined;
}

/** Answers a run must have had for where it settled to be worth remembering. */
const REMEMBERED_ANSWERS = 500;

/**
 * Signed rows that may wait for a wire slot while `auto` grows its limit: about two seconds of
 * one core's signing per core (an RSA-4096 signature costs ~4 ms of CPU), at most BACKLOG_MAX.
 * While the limit doubles from its start, a round trip a step, the signer works on instead of
 * waiting for it, and the rows it signed go out as the limit grows (bench/README.md, "at a
 * distance"). Each waiting row holds its values, body and signature: a few KB.
 */
export function signedBacklog(cores: number): number {
  return Math.min(BACKLOG_MAX, BACKLOG_PER_CORE * cores);
}
const BACKLOG_PER_CORE = 512;
const BACKLOG_MAX = 4096;

/**
 * Whether the controller is told how many signed rows wait for a wire slot. Fewer from one
 * round trip to the next while the limit is full says the signer, not the service, is what the
 * wire waits for. Not while the reader waits for room in the window and a signing place is
 * free: then the rows waiting run down because none are read, and the wire, not the signer, is
 * slow. (Past the file's last row the reader waits for nothing: they are all there is to send,
 * and told, so that the limit does not grow only to send them in one burst.)
 */
export function tellsReady({ readerWaits, signersBusy }: { readerWaits: boolean; signersBusy: boolean }): boolean {
  return !readerWaits || signersBusy;
}

/** Pure: when the next send may start, `1000 / rate` ms after the previous one started. */
export function nextSendAt(previous: number, now: number, rate: number): number {
  return Math.max(now, previous + 1000 / rate);
}

export function createSendWindow(options: SendWindowOptions): SendWindow {
  const { ahead, rate, signal } = options;
  const backlog = options.backlog ?? 0;
  const max = options.maxConcurrency ?? 64;
  const memory = options.concurrency === 'auto' ? options.paceMemory : undefined;
  const limit = createAdaptiveLimit({
    limit: options.concurrency,
    start: rememberedStart(memory && recall(memory, 'import'), options.startConcurrency ?? 8, max),
    max,
    // A limit above what is used would let a pause's signed rows out all at once.
    settle: true,
  });
  const wire = createWireSlots(limit.current);
  const signing = pLimit(ahead);
  const running = new Set<Promise<void>>();
  // Signed rows waiting for a wire slot, told to the controller (tellsReady).
  let ready = 0;
  // Rows signed so far: with the clock, the pace the signer makes them at, which the limit need not pass.
  let made = 0;
  let waiter: (() => void) | undefined;
  const told = () => tellsReady({ readerWaits: waiter !== undefined, signersBusy: signing.activeCount >= ahead || signing.pendingCount > 0 });
  // --rate: sends take turns through this chain; each waits from the moment the previous one
  // actually started, so a timer that fires late (a busy event loop) never lets two bunch up.
  let turns: Promise<void> = Promise.resolve();
  let lastStart = Number.NEGATIVE_INFINITY;
  const paced = (rate: number): Promise<void> => {
    turns = turns.then(async () => {
      const wait = nextSendAt(lastStart, Date.now(), rate) - Date.now();
      if (wait > 0) await sleep(wait, undefined, { signal }).catch(() => undefined);
      lastStart = Date.now();
    });
    return turns;
  };

  return {
    async slot() {
      while (running.size >= wire.limit + ahead + (limit.growing ? backlog : 0)) {
        await new Promise<void>((resolve) => {
          waiter = resolve;
        });
      }
    },
    run(task) {
      const done = task().finally(() => {
        running.delete(done);
        const wake = waiter;
        waiter = undefined;
        wake?.();
      });
      running.add(done);
    },
    signing: (work) => signing(work),
    // --rate paces what goes on the wire, not what is read: signed rows waiting for a slot
    // must not go out back to back when a slow request frees it.
    async wire(work) {
      ready++;
      made++;
      const slot = await wire.take().finally(() => ready--);
      try {
        if (rate !== undefined) await paced(rate);
        return await work(slot);
      } finally {
        slot.leave();
      }
    },
    async drain() {
      while (running.size > 0) await Promise.allSettled([...running]);
      if (memory !== undefined && limit.answered >= REMEMBERED_ANSWERS) {
        remember(memory, 'import', { settled: limit.limits().settled, throttled: limit.throttled, at: new Date().toISOString() });
      }
    },
    observe(answer) {
      // Counted with the rows on a signing thread: a batch of signatures done moves rows from
      // one to the other, and only the wire taking them, faster than they are signed, lowers both.
      limit.observe(answer, Math.max(1, wire.held), { ready: told() ? ready + signing.activeCount : undefined, made });
      wire.limit = limit.current;
    },
    limits: () => limit.limits(),
    inFlight: () => wire.held,
  };
}
