import { redactUrl } from './service/url.js';

/** Tokens have a known shape: whatever a message quotes (a path, a header, a server's echo), never print one. */
export function redactSecrets(text: string): string {
  return redactUrl(text.replace(/lk_(live|sandbox|test)_[^\s"',;]+/g, 'lk_$1_[redacted]'));
}
