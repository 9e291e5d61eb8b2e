/**
 * How far back the pager knows ids exactly: an id repeated on its own page or on any of the
 * four pages before is dropped; one from further back is written again and counted as a
 * possible repeat (it matches by its 64-bit print alone). Against a fake service that serves
 * a hand-made listing.
 */
import { describe, expect, it } from 'vitest';
import { exportClients } from '../src/export/run-export.js';
import { createServiceClient } from '../src/service/client.js';
import { collector, idRange, parseCsv, startFakeService } from './export.helpers.js';

describe('repeated ids and the pages kept', () => {
  it('drops a repeat from its own page and from 4 pages back, writes one from 5 pages back once more', async () => {
    // Pages of 10 ids r0…r69 (7 pages); the short last page, 7, repeats:
    // r71 (its own page, twice), r30 (page 3: 4 pages back), r25 (page 2: 5 pages back).
    const pageIds = (page: number): string[] =>
      page < 7 ? idRange('r', page * 10, page * 10 + 10) : ['r70', 'r71', 'r71', 'r30', 'r25', 'r72'];
    const fake = await startFakeService((page) => ({ ids: pageIds(page) }));
    const service = createServiceClient({ baseUrl: fake.url, token: 'lk_sandbox_test', retry: { retries: 0 }, connections: 4 });
    const sink = collector();
    const summary = await exportClients({ service, out: sink, columns: ['id'], pageSize: 10, prefetch: 2 });
    await service.close();
    await fake.close();
    const ids = parseCsv(await sink.text()).map((record) => record.id!);
    expect(ids).toEqual([...idRange('r', 0, 70), 'r70', 'r71', 'r25', 'r72']);
    expect(summary).toMatchObject({ duplicatesDropped: 2, possibleRepeats: 1 });
    expect(summary.account).toMatchObject({ duplicates: 2, written: 74 });
  });
});
