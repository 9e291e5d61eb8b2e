/**
 * The company-network part of the options, resolved once (options.ts calls it): proxy flags
 * and variables, extra CAs, a client certificate, the outage timeout. Files are read and
 * checked here, so a bad one stops the run before any connection, naming the file (never a
 * key's content).
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import { checkProxyUrl, type NetworkSettings, proxyEnvFrom, type TlsSettings } from '../service/dispatcher.js';
import { SERVICE_DEFAULTS } from '../service/defaults.js';

export interface NetworkArgv {
  proxy?: string | undefined;
  caFile?: string | undefined;
  clientCert?: string | undefined;
  clientKey?: string | undefined;
  outageTimeout?: number | undefined;
}

export interface ResolvedNetwork {
  network: NetworkSettings;
  outageTimeoutMs: number;
  /** Where the extra CAs came from, for check's report. */
  caFiles: string[];
  /** NODE_TLS_REJECT_UNAUTHORIZED=0 was set: ignored (every connection verifies), and said. */
  tlsCheckOffIgnored: boolean;
}

/** What a run says when the environment asks for certificate checks to be off. */
export const TLS_CHECK_OFF_IGNORED =
  'NODE_TLS_REJECT_UNAUTHORIZED=0 is set in the environment: ignored, ccs-bulk always verifies the service\'s certificate ' +
  '(for a private or company CA, give it with --ca-file FILE or NODE_EXTRA_CA_CERTS)';



export async function resolveNetwork(argv: NetworkArgv, env: NodeJS.ProcessEnv): Promise<ResolvedNetwork> {
  const seconds = argv.outageTimeout ?? SERVICE_DEFAULTS.outageTimeoutS;
  const timeout = z.number().positive('--outage-timeout must be positive').max(7 * 24 * 3600, '--outage-timeout must be at most a week').safeParse(seconds);
  if (!timeout.success) throw new UsageError(timeout.error.issues[0]?.message ?? 'bad --outage-timeout', 'bad_option');

  const network: NetworkSettings = { env: proxyEnvFrom(env) };
  const proxy = argv.proxy ?? nonEmpty(env.CCS_PROXY);
  if (proxy !== undefined) {
    checkProxyUrl(proxy, argv.proxy !== undefined ? '--proxy' : 'CCS_PROXY');
    network.proxy = proxy;
  }
  for (const [name, value] of [['HTTPS_PROXY', network.env?.httpsProxy], ['HTTP_PROXY', network.env?.httpProxy]] as const) {
    if (value !== undefined) checkProxyUrl(value, name);
  }

  const tls: TlsSettings = {};
  const caFiles: string[] = [];
  const caFile = argv.caFile ?? nonEmpty(env.CCS_CA_FILE);
  if (caFile !== undefined) {
    const bundles = [await readCaBundle(caFile, argv.caFile !== undefined ? '--ca-file' : 'CCS_CA_FILE')];
    caFiles.push(caFile);
    // An explicit CA list replaces Node's default store, NODE_EXTRA_CA_CERTS included: keep it.
    const extra = nonEmpty(env.NODE_EXTRA_CA_CERTS);
    if (extra !== undefined) {
      bundles.push(await readCaBundle(extra, 'NODE_EXTRA_CA_CERTS'));
      caFiles.push(extra);
    }
    tls.ca = bundles.join('\n');
  } else if (nonEmpty(env.NODE_EXTRA_CA_CERTS) !== undefined) {
    caFiles.push(env.NODE_EXTRA_CA_CERTS!.trim());
  }

  const certFile = argv.clientCert ?? nonEmpty(env.CCS_CLIENT_CERT_FILE);
  const keyFile = argv.clientKey ?? nonEmpty(env.CCS_CLIENT_KEY_FILE);
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new UsageError(
      'a client certificate needs both --client-cert and --client-key (CCS_CLIENT_CERT_FILE, CCS_CLIENT_KEY_FILE)',
      'client_cert_incomplete',
    );
  }
  if (certFile !== undefined && keyFile !== undefined) {
    const { cert, key } = await readClientCertificate(certFile, keyFile);
    tls.cert = cert;
    tls.key = key;
  }
  if (tls.ca !== undefined || tls.cert !== undefined) network.tls = tls;
  // '0' is the value that turns Node's checks off (every other value leaves them on).
  const tlsCheckOffIgnored = env.NODE_TLS_REJECT_UNAUTHORIZED?.trim() === '0';
  return { network, outageTimeoutMs: seconds * 1000, caFiles, tlsCheckOffIgnored };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, 'file_unreadable');
  }
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Every certificate in the bundle must parse: a truncated copy-paste is caught here, not in a handshake. */
export async function readCaBundle(file: string, what: string): Promise<string> {
  const text = await readText(file, what);
  const blocks = text.match(PEM_CERT) ?? [];
  if (blocks.length === 0) {
    throw new UsageError(
      `${what} ${file} holds no PEM certificate (expected "-----BEGIN CERTIFICATE-----"; convert DER with: openssl x509 -inform der -in FILE -out FILE.pem)`,
      'ca_invalid',
    );
  }
  for (const [index, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch {
      throw new UsageError(`${what} ${file}: certificate ${index + 1} of ${blocks.length} does not parse`, 'ca_invalid');
    }
  }
  return blocks.join('\n');
}

async function readClientCertificate(certFile: string, keyFile: string): Promise<{ cert: string; key: string }> {
  const cert = await readText(certFile, '--client-cert');
  const key = await readText(keyFile, '--client-key');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new UsageError(`--client-cert ${certFile} is not a PEM certificate`, 'client_cert_invalid');
  }
  let keyObject: KeyObject;
  try {
    keyObject = createPrivateKey(key);
  } catch {
    // The key's content is a secret: the message names the file only.
    throw new UsageError(
      `--client-key ${keyFile} is not an unencrypted PEM private key`,
      'client_key_invalid',
    );
  }
  if (!x509.checkPrivateKey(keyObject)) {
    throw new UsageError(`--client-key ${keyFile} does not belong to --client-cert ${certFile}`, 'client_key_mismatch');
  }
  return { cert, key };
}
