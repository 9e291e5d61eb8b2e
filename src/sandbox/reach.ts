/**
 * Who can reach the sandbox. On a loopback address only this machine can, and a rehearsal's
 * simple token (`--token test`) is fine. On any other address (0.0.0.0 is every interface)
 * other machines can: the sandbox then takes only a token that is hard to guess, since it
 * hands out whatever clients were imported into it.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { UsageError } from '../errors.js';

/** The shortest token accepted on an address other machines can reach. */
export const MIN_EXPOSED_TOKEN_LENGTH = 24;
/** Different characters such a token needs: `passwordpassword…` has 7, random hex about 14. */
const MIN_DISTINCT_CHARACTERS = 8;

export interface ListeningAddress {
  /** Where the server is bound, as a URL: `http://0.0.0.0:4010` when on every interface. */
  url: string;
  /** Bound to every interface (0.0.0.0 or ::). */
  allInterfaces: boolean;
  /** Bound to a loopback address: no other machine can connect. */
  loopback: boolean;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** 127.0.0.0/8 or ::1, in any spelling (BlockList also matches `::ffff:127.0.0.1`). */
export function isLoopbackAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '');
  const family = isIP(ip);
  return family !== 0 && LOOPBACK.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Whether listening on `host` keeps the sandbox to this machine: the address itself, or for a
 * name the address it resolves to (as listen() resolves it). A name that does not resolve
 * counts as reachable: the stricter rule, and listen() reports the name anyway.
 */
export async function isLoopbackHost(host: string): Promise<boolean> {
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) return isLoopbackAddress(host);
  if (/^localhost\.?$/i.test(host)) return true;
  if (host === '') return false;
  try {
    return isLoopbackAddress((await lookup(host)).address);
  } catch {
    return false;
  }
}

/** Why `token` is too easy to guess for a sandbox other machines reach; undefined when it is not. */
export function tokenWeakness(token: string): string | undefined {
  if (token.length < MIN_EXPOSED_TOKEN_LENGTH) return `it has ${token.length} characters, fewer than ${MIN_EXPOSED_TOKEN_LENGTH}`;
  const distinct = new Set(token).size;
  if (distinct < MIN_DISTINCT_CHARACTERS) return `it uses only ${distinct} different characters, fewer than ${MIN_DISTINCT_CHARACTERS}`;
  const unit = repeatedUnit(token);
  if (unit !== undefined) return `it repeats ${JSON.stringify(unit)}`;
  return undefined;
}

/** The shorter text that `token` repeats (`abcabcabc` → `abc`), if it is one. */
function repeatedUnit(token: string): string | undefined {
  for (let period = 1; period <= token.length / 2; period++) {
    let repeats = true;
    for (let i = period; i < token.length && repeats; i++) repeats = token[i] === token[i - period];
    if (repeats) return token.slice(0, period);
  }
  return undefined;
}

/** Refuses a guessable token on a host other machines can reach (exit 2). */
export async function checkReach(host: string, token: string): Promise<void> {
  const weakness = tokenWeakness(token);
  if (weakness === undefined || (await isLoopbackHost(host))) return;
  throw new UsageError(
    `the sandbox token (--token) is too weak for host ${host} (--host), which other machines can reach: ${weakness}. ` +
      `Leave --token out for a random one, give at least ${MIN_EXPOSED_TOKEN_LENGTH} characters that do not repeat ` +
      `(e.g. openssl rand -hex 16), or listen on 127.0.0.1.`,
    'bad_option',
  );
}

/** The bound address as a URL, and whether other machines can connect to it. */
export function listeningAddress(protocol: 'http' | 'https', address: string, port: number, basePath: string): ListeningAddress {
  const allInterfaces = address === '0.0.0.0' || address === '::';
  const host = address.includes(':') ? `[${address}]` : address;
  return { url: `${protocol}://${host}:${port}${basePath}`, allInterfaces, loopback: isLoopbackAddress(address) };
}
