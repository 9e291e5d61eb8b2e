/**
 * Learns the people a service holds, as an import does before its first row (held-emails.ts),
 * and prints one JSON line: the listing's figures, the time, the print table's bytes, the
 * process's peak RSS and heap. argv: base URL, token, held file (or `none`).
 */
import { createServiceClient } from '../../dist/index.js';
import { learnHeldEmails } from '../../dist/import/send/held-emails.js';

const [baseUrl, token, cache] = process.argv.slice(2);
const service = createServiceClient({ baseUrl, token });
const started = performance.now();
const { held, summary } = await learnHeldEmails({ service, cache: cache === 'none' ? undefined : cache, serviceIdentity: baseUrl });
const seconds = (performance.now() - started) / 1000;
const figures = { ...summary, seconds, tableMb: held.bytes / 1048576, heapMb: process.memoryUsage().heapUsed / 1048576, maxRssMb: process.resourceUsage().maxRSS / 1024 };
held.close();
await service.close();
process.stdout.write(`${JSON.stringify(figures)}\n`);
