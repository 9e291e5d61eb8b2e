/**
 * Turns a resolved Connection into a service client: either the configured service, or an
 * emulator started in-process with a fresh key pair and token (--sandbox).
 */
import { createPrivateKey } from 'node:crypto';
import type { Io } from '../infra/io.js';
import type { LogFile } from '../infra/log-file.js';
import { TLS_CHECK_OFF_IGNORED } from '../config/network-options.js';
import type { Connection } from '../config/options.js';
import type { Sandbox } from '../sandbox/index.js';
import { createServiceClient, type ServiceClient } from '../service/client.js';
import { SERVICE_DEFAULTS } from '../service/defaults.js';
import type { NetworkSettings } from '../service/dispatcher.js';
import type { OutageEvent } from '../service/outage.js';
import { loadSigningKey } from '../service/keys.js';
import { createSigner, type SignatureScheme, type Signer } from '../service/signing.js';

export interface ConnectOptions {
  scheme: SignatureScheme;
  retries: number;
  timeoutMs: number;
  connections: number;
  needSigner: boolean;
  applicationDateField?: string;
  quiet: boolean;
  /** --log-file: every attempt and breaker transition. */
  log?: LogFile | undefined;
}

export interface Connected {
  service: ServiceClient;
  sandbox: Sandbox | undefined;
  close(): Promise<void>;
}

export async function connect(connection: Connection, options: ConnectOptions, io: Io): Promise<Connected> {
  let sandbox: Sandbox | undefined;
  let baseUrl: string;
  let token: string;
  let signer: Signer | undefined;
  let network: NetworkSettings | undefined;
  let outageTimeoutMs: number | undefined;
  if (connection.kind === 'sandbox') {
    const { startSandbox } = await import('../sandbox/index.js');
    sandbox = await startSandbox({
      signature: options.scheme,
      applicationDateField: options.applicationDateField ?? SERVICE_DEFAULTS.applicationDateField,
    });
    baseUrl = sandbox.url;
    token = sandbox.token;
    if (options.needSigner && sandbox.privateKeyPem !== undefined) {
      signer = createSigner(createPrivateKey(sandbox.privateKeyPem), options.scheme);
    }
    if (!options.quiet)
      io.stderr.write(`ccs-bulk: using an in-process sandbox at ${sandbox.url} (fresh key pair and token)\n`);
  } else {
    baseUrl = connection.baseUrl;
    token = connection.token;
    ({ network, outageTimeoutMs } = connection.network);
    if (connection.network.tlsCheckOffIgnored) io.stderr.write(`ccs-bulk: warning: ${TLS_CHECK_OFF_IGNORED}\n`);
    for (const warning of connection.warnings) io.stderr.write(`ccs-bulk: warning: ${warning}\n`);
    if (options.needSigner && connection.signingKeyFile !== undefined) {
      const { key, warnings } = await loadSigningKey(connection.signingKeyFile);
      for (const warning of warnings) io.stderr.write(`ccs-bulk: warning: ${warning}\n`);
      signer = createSigner(key, options.scheme);
    }
  }
  const service = createServiceClient({
    baseUrl,
    token,
    signer,
    connections: options.connections,
    timeouts: { headersMs: options.timeoutMs, bodyMs: options.timeoutMs },
    retry: { retries: options.retries },
    applicationDateField: options.applicationDateField,
    onAttempt: options.log && ((event) => options.log?.attempt(event)),
    signal: io.signal,
    network,
    breaker: outageTimeoutMs === undefined ? undefined : { outageTimeoutMs },
    onOutage: (event) => {
      options.log?.outage(event);
      if (!options.quiet || event.type === 'stopped') io.stderr.write(`ccs-bulk: ${describeOutage(event)}\n`);
    },
  });
  return {
    service,
    sandbox,
    async close() {
      await service.close();
      await sandbox?.close();
    },
  };
}

/** One stderr line per breaker transition: the run is paused, not hung. */
export function describeOutage(event: OutageEvent): string {
  const s = (ms: number) => `${Math.max(0, Math.round(ms / 1000))} s`;
  switch (event.type) {
    case 'paused':
      return `the service failed several requests in a row (the last: ${event.reason}): sending paused, checking again in ${s(event.probeInMs)}`;
    case 'probeFailed':
      return `still down after ${s(event.downForMs)} (${event.reason}): checking again in ${s(event.probeInMs)}`;
    case 'resumed':
      return `the service is back after ${s(event.downForMs)}: sending resumed`;
    case 'stopped':
      return `the service has been down for ${s(event.downForMs)}: stopping (--outage-timeout)`;
  }
}
