/**
 * The import's chart as inline SVG (no script, no external font): rows per second and requests
 * in flight over time, with the seconds the service was down shaded.
 */
import { count, esc } from './html.js';
import type { TimePoint } from './timeline.js';

const WIDTH = 960;
const HEIGHT = 260;
const PAD = { left: 56, right: 56, top: 16, bottom: 34 };

interface Scale {
  x(at: number): number;
  y(value: number, max: number): number;
}

export function chartSvg(points: readonly TimePoint[]): string {
  if (points.length < 2) return '<p class="muted">The run took under two seconds: no chart.</p>';
  const rates = points.map((point, i) => (i === 0 ? point.rows / Math.max(point.at, 1e-3) : rate(points[i - 1]!, point)));
  const maxRate = niceMax(Math.max(...rates));
  const maxFlight = niceMax(Math.max(...points.map((point) => point.inFlight)));
  const end = points[points.length - 1]!.at;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const scale: Scale = {
    x: (at) => PAD.left + (at / Math.max(end, 1e-3)) * plotW,
    y: (value, max) => PAD.top + plotH - (value / max) * plotH,
  };
  const pauses = pausedSpans(points)
    .map(([from, to]) => pauseRect(scale, from, to, plotH))
    .join('');
  const line = (values: readonly number[], max: number) =>
    values.map((value, i) => `${scale.x(points[i]!.at).toFixed(1)},${scale.y(value, max).toFixed(1)}`).join(' ');
  return (
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="rows per second and requests in flight over time" xmlns="http://www.w3.org/2000/svg">` +
    pauses +
    axes(scale, end, maxRate, maxFlight) +
    `<polyline class="rate" points="${line(rates, maxRate)}"/>` +
    `<polyline class="flight" points="${line(points.map((point) => point.inFlight), maxFlight)}"/>` +
    '</svg>'
  );
}

/** The paused seconds as [from, to] spans, neighbours joined into one. */
function pausedSpans(points: readonly TimePoint[]): [number, number][] {
  const spans: [number, number][] = [];
  points.forEach((point, i) => {
    if (!point.paused) return;
    const from = i === 0 ? 0 : points[i - 1]!.at;
    const last = spans.at(-1);
    if (last !== undefined && last[1] === from) last[1] = point.at;
    else spans.push([from, point.at]);
  });
  return spans;
}

function rate(previous: TimePoint, point: TimePoint): number {
  return (point.rows - previous.rows) / Math.max(point.at - previous.at, 1e-3);
}

function pauseRect(scale: Scale, from: number, to: number, height: number): string {
  const x = scale.x(from);
  return `<rect class="pause" x="${x.toFixed(1)}" y="${PAD.top}" width="${Math.max(1, scale.x(to) - x).toFixed(1)}" height="${height}"><title>service down: sending paused</title></rect>`;
}

/** 1, 2 or 5 × a power of ten at or above the value: round gridlines. */
function niceMax(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return ([1, 2, 5, 10].find((step) => step * power >= value) ?? 10) * power;
}

function axes(scale: Scale, end: number, maxRate: number, maxFlight: number): string {
  const bottom = HEIGHT - PAD.bottom;
  const right = WIDTH - PAD.right;
  const text = (x: number, y: number, anchor: string, label: string) =>
    `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" text-anchor="${anchor}">${esc(label)}</text>`;
  const parts = [
    `<line class="axis" x1="${PAD.left}" y1="${bottom}" x2="${right}" y2="${bottom}"/>`,
    `<line class="axis" x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${bottom}"/>`,
    `<line class="axis" x1="${right}" y1="${PAD.top}" x2="${right}" y2="${bottom}"/>`,
  ];
  for (const share of [0, 0.5, 1]) {
    const y = scale.y(share, 1);
    parts.push(text(PAD.left - 6, y + 4, 'end', count(Math.round(maxRate * share))));
    parts.push(text(right + 6, y + 4, 'start', count(Math.round(maxFlight * share))));
    parts.push(text(scale.x(end * share), bottom + 16, 'middle', `${Math.round(end * share)} s`));
  }
  parts.push(text(PAD.left, HEIGHT - 2, 'start', 'rows/s (blue, left)'));
  parts.push(text(right, HEIGHT - 2, 'end', 'requests in flight (red, dashed, right); shaded: service down'));
  return parts.join('');
}
