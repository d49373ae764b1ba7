import { checkedPage, DEFAULT_LIMIT } from '../../../application/index.ts';
import { WEBHOOK_ATTEMPTS_KEPT } from '../../../contract/webhooks.ts';
import { HttpProblem } from '../pipeline/errors.ts';
import { parsePageQuery } from './list-query.ts';

/** A webhook's attempt log, newest first: a page by the one page rule (`checkedPage`), `before` an attempt id from 1. */
export function parseAttemptQuery(querystring: string): { limit: number; before?: number } {
  const query = parsePageQuery(querystring, { integers: ['before'] });
  const { limit } = checkedPage({ limit: query.limit ?? Math.min(DEFAULT_LIMIT, WEBHOOK_ATTEMPTS_KEPT) }, 'attempt');
  const { before } = query;
  if (before === 0) throw new HttpProblem('invalid_query', 'before must be an attempt id, from 1');
  return before === undefined ? { limit } : { limit, before };
}
