/** The sandbox emulator's public surface: start one, inspect its store, inject faults. */
export type { FaultSettings } from './faults.js';
export { DEFAULT_FAULTS } from './faults.js';
export type { Sandbox, SandboxOptions } from './options.js';
export type { SandboxStats } from './routes.js';
export { SEED_FROM, SEED_TO } from './seed.js';
export { startSandbox } from './server.js';
export type { ClientInput, SandboxBankInformation, SandboxClient, SandboxDocument } from './store.js';
export { SandboxStore } from './store.js';
