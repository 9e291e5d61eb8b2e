/**
 * `ccs-bulk sandbox`: run the emulator in the foreground until Ctrl-C. A generated private
 * key goes to a fresh 0700 temp dir as private.pem (0600) and only its path is printed, so
 * the key never lands in a terminal scrollback or a CI log; the dir is removed on exit.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { shellQuote } from '../cli/resume-command.js';
import { parsePublicKey } from '../sandbox/auth.js';
import { type OutageWindow, parseLatencySchedule, parseOutage } from '../sandbox/faults.js';
import type { Sandbox, SandboxOptions } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import { SANDBOX_DEFAULTS } from '../sandbox/defaults.js';

/** The library's options, with files and switches where the library takes values. */
export interface SandboxCommandArgs extends Omit<SandboxOptions, 'publicKeyPem' | 'log' | 'tls' | 'outage' | 'latencySchedule'> {
  /** SPKI PEM file holding the public key to verify X-Signature with */
  publicKeyFile?: string;
  /** one line per request on stderr */
  verbose?: boolean;
  /** serve HTTPS with a CA made for the run */
  tls?: boolean;
  /** require a client certificate (one is issued for the run) */
  tlsClientCert?: boolean;
  /** PEM file of a CA whose client certificates are accepted too (implies required) */
  tlsClientCa?: string;
  /** AT:FOR seconds (optionally :drop): a scheduled outage from the first request */
  outage?: string;
  /** the outage's AT counts from the sandbox's start, not from the first request */
  outageFromStart?: boolean;
  /** the outage's AT counts from the Nth client created */
  outageAfterCreates?: number;
  /** MS@SECONDS,…: latency that changes over time, from the first request */
  latencySchedule?: string;
}

export interface SandboxCommandIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  signal?: AbortSignal | undefined;
}

export async function runSandbox(args: SandboxCommandArgs, io: SandboxCommandIo): Promise<void> {
  const options = await toOptions(args, io);
  const sandbox = await startSandbox(options);
  let keyDir: string | undefined;
  try {
    if (sandbox.privateKeyPem !== undefined || sandbox.tls) keyDir = await writeKeys(sandbox);
    if (!sandbox.listening.loopback) io.stderr.write(exposedWarning(sandbox));
    io.stdout.write(banner(sandbox, args, keyDir));
    await untilStopped(io.signal);
  } finally {
    await sandbox.close();
    if (keyDir) await rm(keyDir, { recursive: true, force: true });
  }
  const { requests, creates, replays, conflicts } = sandbox.stats;
  io.stderr.write(
    `sandbox stopped: ${requests} requests, ${creates} clients created, ${replays} replays, ${conflicts} conflicts\n`,
  );
}

async function toOptions(args: SandboxCommandArgs, io: SandboxCommandIo): Promise<SandboxOptions> {
  const { publicKeyFile, verbose, tls, tlsClientCert, tlsClientCa, outage, outageFromStart, outageAfterCreates, latencySchedule, ...rest } = args;
  const options: SandboxOptions = { ...rest };
  if (outage === undefined && (outageFromStart === true || outageAfterCreates !== undefined)) {
    throw new UsageError('--outage-from-start and --outage-after-creates need --outage AT:FOR', 'bad_option');
  }
  if (outage !== undefined) options.outage = parseOutage(outage, { fromStart: outageFromStart, afterCreates: outageAfterCreates });
  if (latencySchedule !== undefined) options.latencySchedule = parseLatencySchedule(latencySchedule);
  if (tls || tlsClientCert || tlsClientCa !== undefined) {
    if (!tls) throw new UsageError('--tls-client-cert and --tls-client-ca need --tls', 'bad_option');
    const settings: { clientCertificate: boolean; clientCaPem?: string } = { clientCertificate: tlsClientCert === true };
    if (tlsClientCa !== undefined) {
      const { readCaBundle } = await import('../config/network-options.js');
      settings.clientCaPem = await readCaBundle(tlsClientCa, '--tls-client-ca');
    }
    options.tls = settings;
  }
  if (verbose) options.log = (line) => io.stderr.write(`${line}\n`);
  if (publicKeyFile !== undefined) {
    try {
      options.publicKeyPem = await readFile(publicKeyFile, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new UsageError(`cannot read public key file ${publicKeyFile}: ${code}`, 'key_unreadable');
    }
    // Parse it here too, so the message names the file (startSandbox would say "the public key").
    parsePublicKey(options.publicKeyPem, `public key file ${publicKeyFile}`);
  }
  return options;
}

async function writeKeys(sandbox: Sandbox): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ccs-sandbox-'));
  if (sandbox.privateKeyPem !== undefined) {
    await writeFile(join(dir, 'private.pem'), sandbox.privateKeyPem, { mode: 0o600, flag: 'wx' });
    await writeFile(join(dir, 'public.pem'), sandbox.publicKeyPem ?? '', { mode: 0o644, flag: 'wx' });
  }
  const { tls } = sandbox;
  if (tls) {
    await writeFile(join(dir, 'ca.pem'), tls.caPem, { mode: 0o644, flag: 'wx' });
    if (tls.clientCertPem !== undefined && tls.clientKeyPem !== undefined) {
      await writeFile(join(dir, 'client.pem'), tls.clientCertPem, { mode: 0o644, flag: 'wx' });
      await writeFile(join(dir, 'client-key.pem'), tls.clientKeyPem, { mode: 0o600, flag: 'wx' });
    }
  }
  return dir;
}

function banner(sandbox: Sandbox, args: SandboxCommandArgs, keyDir: string | undefined): string {
  const privatePath = keyDir && sandbox.privateKeyPem !== undefined ? join(keyDir, 'private.pem') : undefined;
  const { listening } = sandbox;
  const lines = [`ccs-bulk sandbox listening on ${listening.url}${listening.allInterfaces ? ' (all interfaces)' : ''}`];
  if (listening.url !== sandbox.url) lines.push(`  local URL:    ${sandbox.url}`);
  lines.push(`  token:        ${sandbox.token}`);
  let exportLine = `export CCS_BASE_URL=${shellQuote(sandbox.url)} CCS_TOKEN=${shellQuote(sandbox.token)}`;
  if (privatePath) {
    lines.push(`  signing key:  ${privatePath} (RSA-4096, made for this run, deleted on exit)`);
    lines.push(`  public key:   ${join(keyDir ?? '', 'public.pem')}`);
    exportLine += ` CCS_SIGNING_KEY_FILE=${shellQuote(privatePath)}`;
  } else if (args.publicKeyFile !== undefined && args.verifySignatures !== false) {
    lines.push(
      `  signing key:  the private key matching ${args.publicKeyFile} (set CCS_SIGNING_KEY_FILE to it)`,
    );
  } else {
    lines.push(
      '  signing key:  signatures are NOT verified (--no-verify-signatures): any RSA-4096 key will do',
    );
  }
  const { faults } = sandbox;
  const { hash, padding } = args.signature ?? SANDBOX_DEFAULTS.signature;
  lines.push(`  signature:    ${hash}/${padding}`);
  lines.push(`  clients:      ${sandbox.store.size} seeded; pages start at ${args.pageBase ?? SANDBOX_DEFAULTS.pageBase}`);
  if (args.clock !== undefined) lines.push(`  clock:        ${sandbox.now().toISOString()} (--clock; it runs on, POST /_sandbox/clock moves it)`);
  const active = [
    faults.latencyMs || faults.jitterMs
      ? `latency ${faults.latencyMs}ms${faults.jitterMs ? ` + up to ${faults.jitterMs}ms` : ''}`
      : '',
    faults.latencySchedule
      ? `latency ${faults.latencySchedule.map((step) => `${step.latencyMs}ms from ${step.atMs / 1000}s`).join(', then ')}`
      : '',
    faults.failRate ? `5xx ${faults.failRate}` : '',
    faults.throttleRate ? `429 ${faults.throttleRate}` : '',
    faults.rateLimit ? `rate limit ${faults.rateLimit}/s` : '',
    faults.dropRate ? `drop ${faults.dropRate}` : '',
    faults.resetRate ? `reset after create ${faults.resetRate}` : '',
    faults.authFailAfter !== undefined ? `401 after ${faults.authFailAfter} creates` : '',
    faults.outage
      ? `outage ${faults.outage.atMs / 1000}s after ${outageClock(faults.outage)}, for ${faults.outage.forMs / 1000}s (${faults.outage.kind === 'drop' ? 'connections cut' : '503'})`
      : '',
  ].filter(Boolean);
  lines.push(`  faults:       ${active.length ? active.join(', ') : 'none'}`);
  const use = [`  ${exportLine}`];
  let curlTls = '';
  if (sandbox.tls && keyDir) {
    const caPath = join(keyDir, 'ca.pem');
    lines.push(`  TLS CA:       ${caPath} (made for this run, deleted on exit)`);
    use.push(`  export NODE_EXTRA_CA_CERTS=${shellQuote(caPath)}`);
    curlTls = ` --cacert ${shellQuote(caPath)}`;
    if (sandbox.tls.clientCertPem !== undefined) {
      const cert = join(keyDir, 'client.pem');
      const key = join(keyDir, 'client-key.pem');
      lines.push(`  client cert:  required; ${cert} and ${key} were issued for this run`);
      use.push(`  export CCS_CLIENT_CERT_FILE=${shellQuote(cert)} CCS_CLIENT_KEY_FILE=${shellQuote(key)}`);
      curlTls += ` --cert ${shellQuote(cert)} --key ${shellQuote(key)}`;
    } else if (sandbox.tls.requiresClientCertificate) {
      lines.push(`  client cert:  required, from the CA in ${args.tlsClientCa ?? '--tls-client-ca'}`);
    }
  }
  lines.push(
    '',
    'Use it from another shell:',
    ...use,
    `  curl -s${curlTls} -H "Authorization: Bearer $CCS_TOKEN" "$CCS_BASE_URL/v1/clients?size=5"`,
    '',
    'Press Ctrl-C to stop.',
    '',
  );
  return lines.join('\n');
}

/**
 * Said before the banner, on stderr: the sandbox holds whatever is imported into it (real
 * clients, in a rehearsal with real files) and serves it to anyone with the token.
 */
/** What the banner says the outage counts from. */
function outageClock(outage: OutageWindow): string {
  if (outage.from === 'start') return 'the sandbox started';
  if (typeof outage.from === 'object') return `${outage.from.creates} client${outage.from.creates === 1 ? ' was' : 's were'} created`;
  return 'the first request (ccs-bulk check\'s do not count)';
}

function exposedWarning(sandbox: Sandbox): string {
  const where = sandbox.listening.allInterfaces ? 'every network interface' : sandbox.listening.url;
  return (
    `ccs-bulk: warning: the sandbox listens on ${where}: other machines can reach it, ` +
    'and anyone with the token can read every client imported into it. Use --host 127.0.0.1 unless another machine must connect.\n'
  );
}

/** Resolves on SIGINT/SIGTERM or when the caller's signal aborts (main.ts aborts it on Ctrl-C). */
function untilStopped(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const stop = () => {
      signal?.removeEventListener('abort', stop);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    signal?.addEventListener('abort', stop, { once: true });
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
