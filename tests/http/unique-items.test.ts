import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ClaimRequestSchema, LeasesSchema, ReplayParkedSchema } from '../../contract/consumer-groups.ts';
import { bodyShape, readBody } from '../../adapters/http/parsing/checked-body.ts';
import { HttpProblem } from '../../adapters/http/pipeline/errors.ts';

const read = (schema: Parameters<typeof bodyShape>[0], value: unknown) => readBody({ value, raw: JSON.stringify(value) }, bodyShape(schema, 'a body'));

describe('arrays whose items must be unique (uniqueItems)', () => {
  it('are checked with a set of the values, not by the compiled check hashing every item', () => {
    for (const schema of [LeasesSchema, ClaimRequestSchema, ReplayParkedSchema]) {
      const shape = bodyShape(schema, 'a body');
      assert.ok(shape.uniques.length > 0);
      assert.doesNotMatch(shape.check!.Code(), /hash\(/, `${String(schema.$id)}: no item hashed`);
    }
  });

  it('refuse a repeated item with 400 invalid_body in the compiled check\'s words, and let distinct ones through', () => {
    const refused = (schema: Parameters<typeof bodyShape>[0], value: unknown, message: string) =>
      assert.throws(() => read(schema, value), (error: unknown) => error instanceof HttpProblem && error.code === 'invalid_body' && error.message === message);
    refused(LeasesSchema, { leases: ['t.1', 't.2', 't.1'] }, 'leases: Expected array elements to be unique');
    refused(ClaimRequestSchema, { consumer: 'c', acks: ['t.1', 't.1'] }, 'acks: Expected array elements to be unique');
    refused(ReplayParkedSchema, { positions: [3, 3] }, 'positions: Expected array elements to be unique');
    assert.deepEqual(read(LeasesSchema, { leases: ['t.1', 't.2'] }), { leases: ['t.1', 't.2'] });
    refused(LeasesSchema, { leases: ['t.1', 7] }, 'leases/1: Expected string');
  });
});
