/**
 * Places on the wire for one run's requests: import's creates (the send window)
 * and export's page requests. A request holds one while it is on the wire and lends it while it
 * waits (a retry's delay, a 429's pause, an outage), so the limit counts what the service has,
 * not what is queued here.
 */
import type { WireSlot } from './types.js';

export interface WireSlots {
  /** Slots held now. */
  readonly held: number;
  /** The most that may be held; lowering it takes none back, raising it serves the queue. */
  limit: number;
  /** Waits for a slot: one of the `limit`, held until its `leave()`. */
  take(): Promise<WireSlot>;
}

/**
 * The wire's slots: FIFO like p-limit, but a slot can be lent and taken back (a request
 * waiting to retry holds none), and a request coming back for one goes ahead of those not sent yet.
 */
export function createWireSlots(initial: number): WireSlots {
  let limit = initial;
  let held = 0;
  const again: (() => void)[] = [];
  const fresh: (() => void)[] = [];
  const serve = () => {
    while (held < limit) {
      const next = again.shift() ?? fresh.shift();
      if (next === undefined) return;
      held++;
      next();
    }
  };
  const wait = (queue: (() => void)[]) =>
    new Promise<void>((resolve) => {
      queue.push(resolve);
      serve();
    });
  const slot = (): WireSlot => {
    let holding = true;
    return {
      fits: () => holding && held <= limit,
      leave() {
        if (!holding) return;
        holding = false;
        held--;
        serve();
      },
      async enter() {
        if (holding) return;
        await wait(again);
        holding = true;
      },
    };
  };
  return {
    get held() {
      return held;
    },
    get limit() {
      return limit;
    },
    set limit(value) {
      limit = value;
      serve();
    },
    async take() {
      await wait(fresh);
      return slot();
    },
  };
}
