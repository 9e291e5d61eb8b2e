/** check's options, resolved once like every command's (flags + environment → plain data). */
import { UsageError } from '../errors.js';
import { type CheckFlags, emptyNote, resolveConnection, signingKeyFrom } from '../config/options.js';
import type { CheckOptions } from './run-check.js';
import { CLI_WORDS } from './words.js';

export interface ResolvedCheckOptions extends CheckOptions {
  json: boolean;
}

export async function resolveCheckOptions(argv: CheckFlags, env: NodeJS.ProcessEnv): Promise<ResolvedCheckOptions> {
  if (argv.sandbox) {
    throw new UsageError('check is for a configured service: start `ccs-bulk sandbox` and point CCS_BASE_URL at it', 'bad_option');
  }
  const signingKeyFile = signingKeyFrom(argv, env);
  const connection = await resolveConnection(argv, env, signingKeyFile);
  if (connection.kind !== 'service') throw new UsageError('check needs a service base URL', 'bad_option');
  return {
    baseUrl: connection.baseUrl,
    token: connection.token,
    signingKey: signingKeyFile === undefined ? undefined : { file: signingKeyFile },
    ...(signingKeyFile === undefined && { signingKeyNote: emptyNote(env, 'CCS_SIGNING_KEY_FILE') }),
    scheme: { hash: argv.signatureHash, padding: argv.signaturePadding },
    network: connection.network.network,
    caFiles: connection.network.caFiles,
    timeoutMs: Math.min(argv.timeout, 30) * 1000,
    detectSignature: argv.detectSignature === true,
    json: argv.json === true,
    words: CLI_WORDS,
  };
}
