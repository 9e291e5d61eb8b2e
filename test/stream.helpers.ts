/** Capturing a command's output in-process, and waiting for it to say something. */
import { PassThrough } from 'node:stream';

export function capture() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  return { stream, text: () => text };
}

/**
 * Polls `predicate` until it holds. The deadline is only a bound below the test's own timeout:
 * a sandbox that makes its RSA-4096 key first can take 20 s beside other CPU-heavy work.
 */
export async function waitFor(predicate: () => boolean, ms = 50_000): Promise<void> {
  const until = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
