/**
 * Every process the bench starts: spawned detached, i.e. leader of its own process group, so
 * one kill by its PID reaches /usr/bin/time and the node under it; tracked, bounded in time,
 * and killed on exit, error or Ctrl-C (see killAll).
 */
import { fork, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** PIDs of the group leaders still running. */
const live = new Set();

export function killAll() {
  for (const pid of live) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  live.clear();
}

const TIME = '/usr/bin/time';
/** Peak RSS needs GNU time; without it runs still work and RSS is reported as unknown. */
export const canMeasure = existsSync(TIME);

/** Keeps the last `limit` characters of a stream. */
function tail(stream, limit) {
  let text = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    text += chunk;
    if (text.length > limit * 2) text = text.slice(-limit);
  });
  return () => text.slice(-limit);
}

/**
 * Runs `command args` to completion under /usr/bin/time, killed after `timeoutMs`.
 * Resolves { code, stdout, stderr, wallS, cpuS, maxRssMb }; never rejects for a non-zero
 * exit (the caller decides), rejects on timeout or spawn failure.
 */
export function runMeasured(command, args, { env = process.env, timeoutMs, statsFile, stdinFile }) {
  const measured = canMeasure && statsFile !== undefined;
  const [file, argv] = measured
    ? [TIME, ['-f', '%M %e %U %S', '-o', statsFile, command, ...args]]
    : [command, args];
  const stdin = stdinFile === undefined ? 'ignore' : openSync(stdinFile, 'r');
  const started = performance.now();
  const busyBefore = systemBusySeconds();
  const ownBefore = process.cpuUsage();
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { env, detached: true, stdio: [stdin, 'pipe', 'pipe'] });
    if (typeof stdin === 'number') closeSync(stdin);
    if (child.pid === undefined) {
      child.once('error', reject);
      return;
    }
    live.add(child.pid);
    const stdout = tail(child.stdout, 1 << 20);
    const stderr = tail(child.stderr, 1 << 16);
    const timer = setTimeout(() => {
      kill(child.pid);
      reject(new Error(`${[command, ...args].join(' ')}: still running after ${timeoutMs / 1000}s, killed`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      kill(child.pid);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      // The leader is gone; anything it left in its group goes with it.
      kill(child.pid);
      const wallS = (performance.now() - started) / 1000;
      const own = process.cpuUsage(ownBefore);
      const busyAfter = systemBusySeconds();
      resolve({
        code: code ?? signal,
        stdout: stdout(),
        stderr: stderr(),
        wallS,
        // CPU the whole machine spent meanwhile, and this (parent) process's share of it.
        machineBusyS: busyAfter === undefined ? undefined : busyAfter - busyBefore,
        parentCpuS: (own.user + own.system) / 1e6,
        ...readStats(statsFile),
      });
    });
  });
}

function kill(pid) {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
  live.delete(pid);
}

/** `%M %e %U %S` is the last line (time writes "Command exited with non-zero status" before it). */
function readStats(statsFile) {
  if (statsFile === undefined || !existsSync(statsFile)) return { cpuS: undefined, maxRssMb: undefined };
  const last = readFileSync(statsFile, 'utf8').trim().split('\n').at(-1) ?? '';
  const [rssKb, , user, system] = last.split(' ').map(Number);
  if (![rssKb, user, system].every(Number.isFinite)) return { cpuS: undefined, maxRssMb: undefined };
  return { cpuS: user + system, maxRssMb: rssKb / 1024 };
}

/**
 * CPU seconds all cores have been busy since boot (/proc/stat, USER_HZ = 100), steal
 * included: with the bench's own CPU subtracted, what is left is other people's load.
 */
export function systemBusySeconds() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1);
    const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
    return (user + nice + system + irq + softirq + (steal || 0)) / 100;
  } catch {
    return undefined;
  }
}

const SANDBOX_CHILD = fileURLToPath(new URL('../children/serve-sandbox.js', import.meta.url));

/**
 * Starts the sandbox in its own process (bench/children/serve-sandbox.js) and waits for its
 * URL. Returns { url, token, seeded, stats(), peak(), close() }: peak() answers the most
 * requests it held at once since the last peak() (or its start), and counts again from now.
 */
export function startSandboxProcess(options, { timeoutMs = 120_000 } = {}) {
  const child = fork(SANDBOX_CHILD, [JSON.stringify(options)], {
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  live.add(child.pid);
  const stderr = tail(child.stderr, 1 << 14);
  const reply = (type, ms) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`sandbox: no ${type} within ${ms / 1000}s ${stderr()}`));
      }, ms);
      const onMessage = (message) => {
        if (message?.type !== type) return;
        cleanup();
        resolve(message);
      };
      const onExit = (code) => {
        cleanup();
        reject(new Error(`sandbox exited (${code}) before ${type}: ${stderr()}`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  return reply('ready', timeoutMs).then(
    (ready) => ({
      url: ready.url,
      token: ready.token,
      seeded: ready.seeded,
      startupS: ready.startupS,
      stats() {
        const answer = reply('stats', 10_000);
        child.send({ type: 'stats' });
        return answer;
      },
      async peak() {
        const answer = reply('peak', 10_000);
        child.send({ type: 'peak' });
        return (await answer).peakInFlight;
      },
      async close() {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.send({ type: 'close' });
          const timer = setTimeout(() => kill(child.pid), 10_000);
          await exited;
          clearTimeout(timer);
        }
        kill(child.pid);
      },
    }),
    (error) => {
      kill(child.pid);
      throw error;
    },
  );
}
