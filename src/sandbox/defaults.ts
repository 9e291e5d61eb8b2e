/** The sandbox's defaults, shared by its flags (cli.ts) and the library (startSandbox). */
import { SERVICE_DEFAULTS } from '../service/defaults.js';

/** The sandbox's defaults, shared by the `sandbox` command's flags and startSandbox. */
export const SANDBOX_DEFAULTS = {
  host: '127.0.0.1',
  /** The library's: a free port. */
  port: 0,
  /** The command's: a fixed, documented port to point other shells at. */
  commandPort: 4010,
  seedRandom: 1,
  pageBase: 0 as 0 | 1,
  maxPageSize: 100,
  verifySignatures: true,
  signature: SERVICE_DEFAULTS.scheme,
  applicationDateField: SERVICE_DEFAULTS.applicationDateField,
} as const;
