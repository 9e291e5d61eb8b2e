/**
 * The review page's notes for one run, and for an import the chart's clock: once a second it
 * reads what the run already knows (rows with an outcome, requests on the wire) and the outage
 * gate's last word. The timer never keeps the process alive and stops with the run.
 */
import type { OutageEvent } from '../service/outage.js';
import { ReportNotes, type ReportPlan } from './collect.js';

export interface LiveRun {
  started: number;
  /** Rows with an outcome so far. */
  rows(): number;
  inFlight(): number;
  watchOutage?: ((listener: (event: OutageEvent) => void) => () => void) | undefined;
}

export interface ReportTracker {
  notes: ReportNotes;
  /** The last point, and no more. */
  stop(): void;
}

const SAMPLE_MS = 1000;

export function trackReport(plan: ReportPlan, live: LiveRun | undefined): ReportTracker {
  const notes = new ReportNotes(plan);
  if (live === undefined) return { notes, stop() {} };
  const sample = () => notes.timeline.add((Date.now() - live.started) / 1000, live.rows(), live.inFlight());
  const timer = setInterval(sample, SAMPLE_MS);
  timer.unref();
  const unwatch = live.watchOutage?.((event) => notes.timeline.outage(event.type === 'paused' || event.type === 'probeFailed'));
  let stopped = false;
  return {
    notes,
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      unwatch?.();
      sample();
    },
  };
}
