import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { markdownTables, PERFORMANCE_PAGE, RESULTS_END, RESULTS_START, withResults } from '../bench/report.ts';
import type { BenchResults } from '../bench/report.ts';

const root = new URL('..', import.meta.url);
const read = (path: string) => readFileSync(fileURLToPath(new URL(path, root)), 'utf8');

describe('docs/performance.md', () => {
  it('shows the figures of bench/results/latest.json as bench/report.ts renders them (npm run bench:report)', () => {
    const page = read(PERFORMANCE_PAGE);
    const results = JSON.parse(read('bench/results/latest.json')) as BenchResults;
    const block = page.slice(page.indexOf(RESULTS_START) + RESULTS_START.length, page.indexOf(RESULTS_END));
    assert.equal(block, `\n${markdownTables(results)}\n`);
  });

  it('keeps what is written by hand around the rendered block', () => {
    const page = `# Title\n\n${RESULTS_START}\nold figures\n${RESULTS_END}\n\nafter\n`;
    assert.equal(withResults(page, 'new figures'), `# Title\n\n${RESULTS_START}\nnew figures\n${RESULTS_END}\n\nafter\n`);
    assert.throws(() => withResults('# no markers\n', 'figures'), /has no <!-- bench:results:start -->/);
  });
});
