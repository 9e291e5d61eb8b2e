/** The library API: the same work as the CLI, importable. */
export type { CodeOf, ErrorClassName, ErrorCode, ExitCode } from './errors.js';
export {
  AuthError,
  CcsError,
  ConnectionError,
  ERROR_CODES,
  EXIT_CODES,
  InputError,
  NetworkError,
  OutageError,
  OutputError,
  ServiceError,
  StoppedError,
  UsageError,
} from './errors.js';
export { checkSetup, type CheckSetupOptions } from './check/check-setup.js';
export type { CheckLine, CheckName, CheckReport, CheckStatus } from './check/types.js';
export { EXPORT_COLUMNS, type ExportColumn } from './export/columns.js';
export { EXPORT_DEFAULTS } from './export/defaults.js';
export { listAllClients, type ListAllClientsOptions } from './export/list-all.js';
export type { ExportClientsOptions, ExportSummary } from './export/run-export.js';
export { exportClients } from './export/run-export.js';
export type { ImportClientsInput, ImportClientsOptions, ImportPlan, ImportSettings, ImportSummary, RowError, RowResult, RunStopped } from './import/run-import.js';
export type { RowsInput } from './import/read/index.js';
export type { LookalikeColumn } from './import/row/unmapped.js';
export type { CompositeField, CompositeSample } from './import/row/composite.js';
export type { PartialAddress } from './import/row/address-parts.js';
export type { Identity } from './import/row/identity.js';
export { parseIdentity } from './import/row/identity.js';
export type { HeldSummary, ListingProgress } from './import/send/held-emails.js';
export { verifyMigration, type VerifyMigrationOptions } from './verify/run-verify.js';
export type { VerifyReport } from './verify/report.js';
export { IMPORT_DEFAULTS } from './import/defaults.js';
export { importClients, isImportStop } from './import/run-import.js';
export type { OnProgress, ProgressSnapshot } from './infra/progress-report.js';
export type { FaultSettings, Sandbox, SandboxClient, SandboxOptions } from './sandbox/index.js';
export { SANDBOX_DEFAULTS } from './sandbox/defaults.js';
export { startSandbox } from './sandbox/index.js';
export type { ServiceClient, ServiceClientOptions } from './service/client.js';
export { createServiceClient } from './service/client.js';
export { SERVICE_DEFAULTS } from './service/defaults.js';
export { type LoadedKey, loadSigningKey, publicKeyFingerprint, signingKeyFromPem } from './service/keys.js';
export { DEFAULT_RETRY, parseRetryAfter, retryDelay } from './service/retry.js';
export { type BreakerPolicy, breakerStep, DEFAULT_BREAKER } from './service/breaker.js';
export { type NetworkSettings, type ProxyEnv, proxyEnvFrom, type TlsSettings } from './service/dispatcher.js';
export type { OutageEvent } from './service/outage.js';
export type { Client, CreateClientBody, ListClientsQuery } from './service/schemas.js';
export type { SignatureScheme, Signer } from './service/signing.js';
export { createSigner, generateRsaKeyPair, verifySignature } from './service/signing.js';
