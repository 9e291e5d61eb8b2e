/**
 * The import's course for the review page's chart: one point a second (rows recorded, requests
 * on the wire, whether sending was paused by an outage). A long run keeps at most MAX_POINTS:
 * when full, neighbouring points merge, so a day-long run costs what a 20-minute one does.
 */

const MAX_POINTS = 1200;

export interface TimePoint {
  /** Seconds since the run started. */
  at: number;
  /** Rows with an outcome so far. */
  rows: number;
  /** Requests on the wire at the sample (the mean of merged points). */
  inFlight: number;
  /** Sending was paused (the service down) at some time since the previous point. */
  paused: boolean;
}

export class Timeline {
  readonly points: TimePoint[] = [];
  #paused = false;
  #pausedSince = false;

  /** An outage began (true) or ended (false). */
  outage(paused: boolean): void {
    this.#paused = paused;
    if (paused) this.#pausedSince = true;
  }

  add(at: number, rows: number, inFlight: number): void {
    this.points.push({ at, rows, inFlight, paused: this.#pausedSince || this.#paused });
    this.#pausedSince = false;
    if (this.points.length >= MAX_POINTS) this.#halve();
  }

  /** Pairs merge into their later point: rows and time as at its end, in flight averaged. */
  #halve(): void {
    const merged: TimePoint[] = [];
    for (let i = 0; i < this.points.length; i += 2) {
      const a = this.points[i]!;
      const b = this.points[i + 1];
      merged.push(b === undefined ? a : { at: b.at, rows: b.rows, inFlight: (a.inFlight + b.inFlight) / 2, paused: a.paused || b.paused });
    }
    this.points.splice(0, this.points.length, ...merged);
  }
}
