/** The import's and the export's heartbeat (cli/heartbeat.ts), from their options and connection. */
import { type Heartbeat, NO_HEARTBEAT, startHeartbeat } from '../cli/heartbeat.js';
import type { CommonOptions } from '../config/options.js';
import type { Io } from '../infra/io.js';
import { SERVICE_DEFAULTS } from '../service/defaults.js';
import type { Connected } from './connect.js';

/** Plain lines while nothing finishes, where progress is plain lines: not a terminal's bar, not --quiet. */
export function heartbeatFor(options: CommonOptions, connected: Connected, io: Io): Heartbeat {
  if (options.quiet || io.stderr.isTTY === true) return NO_HEARTBEAT;
  const { connection } = options;
  const outageTimeoutMs = connection?.kind === 'service' ? connection.network.outageTimeoutMs : SERVICE_DEFAULTS.outageTimeoutS * 1000;
  return startHeartbeat({ stream: io.stderr, intervalMs: options.progressIntervalMs, service: connected.service, outageTimeoutMs });
}
