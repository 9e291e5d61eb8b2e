import { createPublicKey } from 'node:crypto';
import { access, mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { publicKeyFingerprint } from '../service/keys.js';
import { generateRsaKeyPair } from '../service/signing.js';

export interface KeygenArgs {
  out: string;
}

/** Writes private.pem (0600) and public.pem (SPKI) into DIR; never overwrites either. */
export async function runKeygen(args: KeygenArgs, io: { stdout: NodeJS.WritableStream }): Promise<void> {
  try {
    await mkdir(args.out, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new UsageError(`cannot create ${args.out}: ${(error as NodeJS.ErrnoException).code ?? error}`, 'key_write');
  }
  const privatePath = join(args.out, 'private.pem');
  const publicPath = join(args.out, 'public.pem');
  // Checked before the (slow) generation, so an existing pair is never half-replaced.
  for (const path of [privatePath, publicPath]) {
    if (
      await access(path).then(
        () => true,
        () => false,
      )
    ) {
      throw new UsageError(
        `${path} already exists; keygen never overwrites a key (choose another --out)`,
        'key_exists',
      );
    }
  }
  const { privateKeyPem, publicKeyPem } = await generateRsaKeyPair();
  // 'wx' fails if the file exists: an existing key is never replaced.
  await writeNew(privatePath, privateKeyPem, 0o600);
  await writeNew(publicPath, publicKeyPem, 0o644);
  const fingerprint = publicKeyFingerprint(createPublicKey(publicKeyPem));
  io.stdout.write(
    `Wrote an RSA-4096 key pair:\n  private key: ${privatePath} (mode 600, keep it secret)\n  public key:  ${publicPath} (give this to the service's account manager)\n  fingerprint: ${fingerprint}\n`,
  );
}

async function writeNew(path: string, text: string, mode: number): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'wx', mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new UsageError(
        `${path} already exists; keygen never overwrites a key (choose another --out)`,
        'key_exists',
      );
    }
    throw new UsageError(
      `cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`,
      'key_write',
    );
  }
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}
