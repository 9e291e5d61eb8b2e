/**
 * `ccs-bulk verify SOURCE…`: connect, run verifyMigration, print the summary. Exit 0 when
 * every row is proven and no other client is on the service, 1 when problems were found;
 * failures are thrown (main.ts maps them: a usage or input problem → 2, the service → 1 or 3).
 */
import type { ExitCode } from '../errors.js';
import type { Io } from '../infra/io.js';
import { redactUrl } from '../service/url.js';
import { SERVICE_DEFAULTS } from '../service/defaults.js';
import type { VerifyOptions } from '../verify/options.js';
import { verifyMigration } from '../verify/run-verify.js';
import { createProgress, progressDisplay } from '../cli/progress.js';
import { connect } from './connect.js';
import { formatVerifySummary, verifyJson } from './verify-summary.js';

/** Pages on the wire at once while listing (export's starting prefetch). */
const CONNECTIONS = 4;

export async function runVerify(options: VerifyOptions, io: Io): Promise<ExitCode> {
  const { verify: settings, connection } = options;
  if (options.configFile !== undefined && !options.quiet) io.stderr.write(`ccs-bulk verify: config ${options.configFile}\n`);
  const connected = await connect(
    connection,
    {
      scheme: SERVICE_DEFAULTS.scheme,
      retries: options.retries,
      timeoutMs: options.timeoutMs,
      connections: CONNECTIONS,
      needSigner: false,
      quiet: options.quiet,
    },
    io,
  );
  const progress = createProgress({ ...progressDisplay(options, io), unit: 'rows', knownTotal: false });
  try {
    const report = await verifyMigration({
      ...settings,
      service: connected.service,
      serviceName: connected.sandbox ? `in-process sandbox ${connected.sandbox.url}` : redactUrl(connected.service.baseUrl),
      commandLine: options.commandLine,
      signal: io.signal,
      onProgress: (snapshot) => progress.update(snapshot),
    }).finally(() => progress.stop());
    if (options.json) io.stdout.write(`${JSON.stringify(verifyJson(report))}\n`);
    if (!options.quiet) io.stderr.write(formatVerifySummary(report));
    return report.proven ? 0 : 1;
  } finally {
    await connected.close();
  }
}
