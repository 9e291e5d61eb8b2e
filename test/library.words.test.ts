/**
 * Errors in the caller's words: what importClients and exportClients let out names options
 * (`maxErrors: 1`, `resume: true`), where the commands name flags (`--max-errors 1`).
 */
import { createPrivateKey } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { importClients, isImportStop } from '../src/import/run-import.js';
import { inLibraryWords, LIBRARY_WORDS } from '../src/infra/library-words.js';
import { createServiceClient } from '../src/service/client.js';
import { createSigner } from '../src/service/signing.js';
import { CLIENT_HEADER, runCliInProcess, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox();

describe('errors in the caller\'s words', () => {
  it('every row of the table turns a flag into the option that sets it', () => {
    expect(inLibraryWords('stopped after 1 errors (--max-errors 1)')).toBe('stopped after 1 errors (maxErrors: 1)');
    expect(inLibraryWords('the service stayed down past --outage-timeout 3 s')).toBe('the service stayed down past breaker.outageTimeoutMs: 3000');
    expect(inLibraryWords('add --resume to continue that import, or --overwrite to start it again')).toBe('add resume: true to continue that import, or overwrite: true to start it again');
    expect(inLibraryWords("To send them: --map 'currency=Zahlwährung'; to drop them: --ignore-column 'Zahlwährung'")).toBe("To send them: map: { currency: 'Zahlwährung' }; to drop them: ignoreColumns: ['Zahlwährung']");
    expect(inLibraryWords('check the token (CCS_TOKEN or --token-file): ccs-bulk check tests it')).toBe('check the token (the token given to createServiceClient): checkSetup() tests it');
    expect(inLibraryWords('--identity none')).toBe("identity: { by: 'none' }");
    expect(inLibraryWords('and --signature-hash / --signature-padding')).toBe('and the scheme given to createSigner');
    expect(inLibraryWords('set HTTPS_PROXY or --proxy')).toBe("set HTTPS_PROXY or createServiceClient's network.proxy");
    // No row leaves a flag behind in what it writes.
    for (const [pattern] of LIBRARY_WORDS) expect(pattern.flags).toContain('g');
  });

  it('a library stop and a library refusal say options; the CLI says flags', async () => {
    const file = join(ctx.dir, 'words.csv');
    const rows = validRows(4, 47_000);
    rows[0]![1] = 'broken';
    await writeFile(file, stringify([CLIENT_HEADER, ...rows]));
    const service = createServiceClient({ baseUrl: ctx.sandbox.url, token: ctx.sandbox.token, signer: createSigner(createPrivateKey(ctx.sandbox.privateKeyPem!)) });
    try {
      const stop = await importClients({ file, service, maxErrors: 1, concurrency: 1 }).catch((error: unknown) => error);
      expect(isImportStop(stop)).toBe(true);
      if (!isImportStop(stop)) return;
      expect(stop.message).toContain('(maxErrors: 1)');
      expect(stop.summary.stopped?.message).not.toContain('--');
      const refused = await importClients({ file, service }).catch((error: unknown) => error as Error);
      expect((refused as Error).message).toContain('add resume: true to continue');
      expect((refused as Error).message).not.toMatch(/--[a-z]/);
    } finally {
      await service.close();
    }
    const cli = await runCliInProcess(['import', file], { env: ctx.env() });
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain('add --resume to continue');
  });
});
