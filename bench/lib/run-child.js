/**
 * How every measured child runs: node under GNU time with a clean environment and a time
 * bound, a fresh sandbox process per measurement, and how much of the machine was someone
 * else's meanwhile. Runs are cached in ctx.cache so parts reuse each other's.
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMeasured, startSandboxProcess } from './processes.js';
import { CONTENDED_CORES } from './report.js';

export const BIN = fileURLToPath(new URL('../../dist/bin.cjs', import.meta.url));
export const child = (name) => fileURLToPath(new URL(`../children/${name}.js`, import.meta.url));

let sequence = 0;
export const tempPath = (ctx, name) => join(ctx.tmp, `${++sequence}-${name}`);

/**
 * The environment of every child: this one's, without any CCS_ settings of the user's, and
 * libuv's thread pool sized as the ccs-bulk command sizes its own (src/bin.cts), so the signing
 * floors sign on as many threads as the import they are compared with.
 */
export function childEnv(extra) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('CCS_')));
  const pool = env.UV_THREADPOOL_SIZE ?? String(Math.max(2, availableParallelism()));
  return { ...env, UV_THREADPOOL_SIZE: pool, ...extra };
}

/** A bound on any run: generous, but a hung run cannot stall the suite. */
export const timeoutFor = (items, perSecond) => 60_000 + (items / perSecond) * 1000;

export function lastJson(text, what) {
  const line = text.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`${what}: no JSON summary on stdout (${line.slice(0, 200)})`);
  }
}

/** The most other-people's load seen by any run inside a measurement (0 if none was measured). */
function contention(value) {
  if (value === null || typeof value !== 'object') return 0;
  return Math.max(
    value.foreignCores ?? 0,
    ...Object.values(value).map((item) => (typeof item === 'object' ? contention(item) : 0)),
  );
}

/**
 * Makes a measurement once per run (parts share them). With ctx.retryContended, one that saw
 * more than CONTENDED_CORES of other load is made again, up to that many times, keeping the
 * least contended.
 */
export async function cached(ctx, key, make) {
  if (!ctx.cache.has(key)) {
    let best = await make();
    for (let i = 0; i < ctx.retryContended && contention(best) > CONTENDED_CORES; i++) {
      ctx.log(`    other load ${contention(best).toFixed(2)} cores: measuring again`);
      const again = await make();
      if (contention(again) < contention(best)) best = again;
    }
    ctx.cache.set(key, best);
  }
  return ctx.cache.get(key);
}

/** Runs node on `script args`, measured; with ctx.cpuProfDir the tool under test runs under --cpu-prof. */
export async function runNode(ctx, script, args, { env, timeoutMs, label, tool = false }) {
  const flags = tool && ctx.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${ctx.cpuProfDir}`] : [];
  const result = await runMeasured(process.execPath, [...flags, script, ...args], {
    env: childEnv(env),
    timeoutMs,
    statsFile: tempPath(ctx, 'time.txt'),
  });
  if (result.code !== 0) {
    throw new Error(`${label}: exit ${result.code}\n${result.stderr.trim().split('\n').slice(-8).join('\n')}`);
  }
  return result;
}

export function sandbox(ctx, options) {
  return startSandboxProcess({ publicKeyFile: ctx.keys.publicKeyFile, ...options });
}

/**
 * Cores' worth of CPU that processes not ours used during a run: the machine's busy time
 * minus this process, the measured child and the sandbox. Above ~0.2 the run was contended.
 */
export function foreignCores(result, sandboxCpuS = 0) {
  if (result.machineBusyS === undefined || result.cpuS === undefined) return undefined;
  const foreign = result.machineBusyS - result.parentCpuS - result.cpuS - sandboxCpuS;
  return Math.max(0, foreign / result.wallS);
}

/** The sandbox's CPU over a run: its counters before and after. */
export async function sandboxCpu(service, before) {
  const after = await service.stats();
  return { cpuS: after.cpuS - before.cpuS, requests: after.stats.requests - before.stats.requests };
}

export function outcome(result, summary, rows, sandboxCpuS = 0) {
  return {
    rows,
    rowsPerSecond: rows / (summary.elapsedMs / 1000),
    elapsedS: summary.elapsedMs / 1000,
    wallS: result.wallS,
    cpuS: result.cpuS,
    maxRssMb: result.maxRssMb,
    foreignCores: foreignCores(result, sandboxCpuS),
  };
}

/**
 * Runs `measure(service)` against a fresh sandbox, closed after; `measure` returns
 * { result (of runMeasured), summary }: the summary, with the run's foreign load, is kept.
 */
export async function withSandbox(ctx, options, measure) {
  const service = await sandbox(ctx, options);
  try {
    const before = await service.stats();
    const { result, summary } = await measure(service);
    const served = await sandboxCpu(service, before);
    return { ...summary, foreignCores: foreignCores(result, served.cpuS) };
  } finally {
    await service.close();
  }
}
