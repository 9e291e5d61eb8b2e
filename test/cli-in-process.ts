import { PassThrough } from 'node:stream';
import { runCli as runCliInProcess } from '../src/cli/cli.js';
import { CcsError } from '../src/errors.js';

/**
 * The CLI in this process (no child to start): its exit code (a thrown error's, as main.ts maps
 * it, with main's message line) and its output. Where the real process is the point (signals,
 * the binary's exit), tests use helpers.ts's runCli instead.
 */
export async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  let code: number;
  try {
    code = await runCliInProcess(args, env, { stdout, stderr });
  } catch (error) {
    if (!(error instanceof CcsError)) throw error;
    code = error.exitCode;
    err += `ccs-bulk: error: ${error.message} [${error.code}]\n`;
  }
  return { code, stdout: out, stderr: err };
}
