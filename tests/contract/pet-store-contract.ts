import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PetEvent, PetStatus } from '../../domain/index.ts';
import {
  addPet, changePetStatus, currentSchemaVersion, getPet, IdempotencyKeyReused, IdempotencyKeyTaken, listPetPage, listPets, PetNotFound, readEvents,
  readPetHistory, StreamVersionConflict,
} from '../../application/index.ts';
import type { AppendMetadata, Commits, EventLog, ExpectedVersion, IdempotencyRecord, PetStorePorts, StreamAppend, StreamAtVersion } from '../../application/index.ts';
import { appendAsUseCase, createPet } from '../support/append-as-use-case.ts';
import type { PetCreation } from '../support/append-as-use-case.ts';
import type { Append } from '../support/append-as-use-case.ts';

export interface ContractSubject {
  readonly ports: PetStorePorts & { readonly eventLog: EventLog; readonly commits: Commits };
  close(): Promise<void>;
}

const metadata: AppendMetadata = { recordedAt: '2026-11-22T00:00:00.000Z', requestId: 'r', apiKeyId: 'k' };
const petAdded = (id: number, name = 'A', status: PetStatus | null = null): PetEvent => ({
  type: 'PetAdded',
  data: { id, name, categoryId: 1, status },
});

/**
 * What every event store and catalogue must do, whatever it is built on. Each adapter's test file calls
 * this with a factory for a fresh, empty store.
 */
export function petStoreContract(name: string, open: () => Promise<ContractSubject>): void {
  describe(`pet store contract: ${name}`, () => {
    let subject: ContractSubject;
    let ports: ContractSubject['ports'];
    let nextId = 100_000;
    const freshId = () => ++nextId;

    let append: Append;

    before(async () => {
      subject = await open();
      ports = subject.ports;
      append = appendAsUseCase(ports.eventStore);
    });
    after(() => subject.close());

    describe('expected versions', () => {
      it('creates a stream when it expects no stream', async () => {
        const id = freshId();
        const appended = await append(`pet-${id}`, 'no_stream', [petAdded(id)], metadata);
        assert.equal(appended.version, 1);
        const [stored] = await ports.eventLog.readLog({ after: appended.position - 1, limit: 1 });
        assert.deepEqual([stored?.streamId, stored?.position], [`pet-${id}`, appended.position]);
      });

      it('answers with the position of the append\'s last event', async () => {
        const id = freshId();
        const change: PetEvent = { type: 'PetStatusChanged', data: { id, from: null, to: 'pending' } };
        const { position } = await append(`pet-${id}`, 'no_stream', [petAdded(id), change], metadata);
        const stored = await ports.eventLog.readLog({ after: position - 2, limit: 3 });
        assert.deepEqual(stored.map((event) => [event.streamId, event.streamVersion]), [[`pet-${id}`, 1], [`pet-${id}`, 2]]);
        assert.equal(stored.at(-1)?.position, position);
      });

      it('refuses no_stream when the stream exists, and writes nothing', async () => {
        const id = freshId();
        await append(`pet-${id}`, 'no_stream', [petAdded(id)], metadata);
        await assert.rejects(append(`pet-${id}`, 'no_stream', [petAdded(id, 'B')], metadata), StreamVersionConflict);
        const stream = await ports.eventStore.readStream(`pet-${id}`);
        assert.equal(stream.version, 1);
        assert.equal((await ports.catalog.get(id))?.pet.name, 'A');
      });

      it('appends at exactly the current version', async () => {
        const id = freshId();
        await append(`pet-${id}`, 'no_stream', [petAdded(id)], metadata);
        const change: PetEvent = { type: 'PetStatusChanged', data: { id, from: null, to: 'pending' } };
        assert.equal((await append(`pet-${id}`, 1, [change], metadata)).version, 2);
        assert.deepEqual(await ports.catalog.get(id), { pet: { id, name: 'A', categoryId: 1, status: 'pending' }, version: 2 });
      });

      for (const expected of [0, 2, 5]) {
        it(`refuses an exact version ${expected} that is not current (1), reporting the actual one`, async () => {
          const id = freshId();
          await append(`pet-${id}`, 'no_stream', [petAdded(id)], metadata);
          const change: PetEvent = { type: 'PetStatusChanged', data: { id, from: null, to: 'sold' } };
          await assert.rejects(append(`pet-${id}`, expected, [change], metadata), (error: unknown) => {
            assert.ok(error instanceof StreamVersionConflict);
            assert.equal(error.actual, 1);
            return true;
          });
          assert.equal((await ports.catalog.get(id))?.pet.status, undefined);
        });
      }

      it('refuses an exact version for a stream that does not exist', async () => {
        const id = freshId();
        await assert.rejects(append(`pet-${id}`, 1, [petAdded(id)], metadata), StreamVersionConflict);
        assert.equal(await ports.catalog.get(id), undefined);
      });
    });

    describe('creations', () => {
      /** A creation of a pet named `name`; each id it was built with is pushed to `built`, when given. */
      const creation = (name: string, options: { built?: number[]; remember?: (id: number) => IdempotencyRecord } = {}) => (id: number): PetCreation => {
        options.built?.push(id);
        const remember = options.remember?.(id);
        return {
          streamId: `pet-${id}`, events: [petAdded(id, name)], metadata,
          options: { petAfter: { id, name, categoryId: 1 }, ...(remember ? { remember } : {}) },
        };
      };

      it('draws an id for each creation, never one drawn before, each greater than the ones committed before it', async () => {
        const first = await createPet(ports.eventStore, creation('first'));
        const created = await Promise.all(Array.from({ length: 10 }, (_, index) => createPet(ports.eventStore, creation(`next ${index}`))));
        const ids = created.map((each) => each.id);
        assert.equal(new Set(ids).size, 10);
        assert.ok(ids.every((id) => id > first.id));
        const later = await createPet(ports.eventStore, creation('later'));
        assert.ok(ids.every((id) => later.id > id));
      });

      it('stores each creation in its own stream under the id it was built with, and answers its version and position', async () => {
        const made = await Promise.all(Array.from({ length: 10 }, async (_, index) => {
          const built: number[] = [];
          const created = await createPet(ports.eventStore, creation(`many ${index}`, { built }));
          assert.equal(built.at(-1), created.id, 'answered with the id of the append committed');
          return { ...created, name: `many ${index}` };
        }));
        for (const { id, name, version, position } of made) {
          const stream = await ports.eventStore.readStream(`pet-${id}`);
          assert.deepEqual(stream.events.map((stored) => [stored.streamVersion, stored.position, stored.event]), [[1, position, petAdded(id, name)]]);
          assert.equal(version, 1);
          assert.deepEqual(await ports.catalog.get(id), { pet: { id, name, categoryId: 1 }, version: 1 });
        }
      });

      it('gives a creation of more than one event a position for each, none shared with the creations committed beside it', async () => {
        const sold = (id: number): PetCreation => ({
          streamId: `pet-${id}`, events: [petAdded(id, 'sold at once', 'available'), { type: 'PetStatusChanged', data: { id, from: 'available', to: 'sold' } }], metadata,
          options: { petAfter: { id, name: 'sold at once', categoryId: 1, status: 'sold' } },
        });
        const [first, longer, ...others] = await Promise.all([
          createPet(ports.eventStore, creation('beside')), createPet(ports.eventStore, sold), ...Array.from({ length: 4 }, () => createPet(ports.eventStore, creation('beside'))),
        ]);
        const stream = await ports.eventStore.readStream(`pet-${longer!.id}`);
        assert.deepEqual(stream.events.map((stored) => stored.streamVersion), [1, 2]);
        assert.ok(stream.events[0]!.position < stream.events[1]!.position);
        assert.equal(longer!.position, stream.events[1]!.position, 'answered with its last event\'s position');
        const positions = [first!, ...others].map((each) => each.position).concat(stream.events.map((stored) => stored.position));
        assert.equal(new Set(positions).size, positions.length, 'no position shared');
        assert.deepEqual(await ports.catalog.get(longer!.id), { pet: { id: longer!.id, name: 'sold at once', categoryId: 1, status: 'sold' }, version: 2 });
      });

      it('stores an idempotency record with the creation, and refuses a taken key, writing nothing and keeping the id taken', async () => {
        const record = (id: number) => ({ scope: 'k', key: 'new-stream', fingerprint: '{}', answer: { id, name: 'kept', categoryId: 1 }, expiresAt: '2999-01-01T00:00:00.000Z' });
        const kept = await createPet(ports.eventStore, creation('kept', { remember: record }));
        assert.deepEqual(await ports.idempotencyKeys.find('k', 'new-stream', new Date()), record(kept.id));
        const built: number[] = [];
        await assert.rejects(createPet(ports.eventStore, creation('refused', { built, remember: record })), IdempotencyKeyTaken);
        const refused = built.at(-1)!;
        assert.notEqual(refused, kept.id);
        assert.equal(await ports.catalog.get(refused), undefined);
        assert.deepEqual(await ports.eventStore.readStream(`pet-${refused}`), { version: 0, events: [] });
        assert.ok((await createPet(ports.eventStore, creation('after'))).id > refused, 'the refused creation\'s id is not drawn again');
      });

      it('refuses alone a creation whose append cannot be built; the others asked with it are stored', async () => {
        const failing = () => {
          throw new Error('no append for this id');
        };
        const [before, broken, after] = await Promise.allSettled([
          createPet(ports.eventStore, creation('before broken')), createPet(ports.eventStore, failing), createPet(ports.eventStore, creation('after broken')),
        ]);
        assert.ok(broken.status === 'rejected' && /no append for this id/.test(String(broken.reason)), String((broken as PromiseRejectedResult).reason));
        for (const [outcome, name] of [[before, 'before broken'], [after, 'after broken']] as const) {
          assert.equal(outcome.status, 'fulfilled');
          const { id } = (outcome as PromiseFulfilledResult<{ id: number }>).value;
          assert.equal((await ports.catalog.get(id))?.pet.name, name);
        }
      });
    });

    describe('appends of several streams', () => {
      /** One stream's part of an append: `events` to pet `id`'s stream at `expected`, leaving `pet`. */
      const part = (id: number, expected: ExpectedVersion, events: readonly PetEvent[], status?: PetStatus): StreamAppend => ({
        streamId: `pet-${id}`, expected, events, stateAfter: { kind: 'present', pet: { id, name: 'A', categoryId: 1, ...(status ? { status } : {}) } },
      });
      const toPending = (id: number, from: PetStatus | null): PetEvent => ({ type: 'PetStatusChanged', data: { id, from, to: 'pending' } });

      it('commits every stream of one append at its version, in one position range', async () => {
        const [one, two] = [freshId(), freshId()];
        const appended = await ports.eventStore.append([part(one, 'no_stream', [petAdded(one)]), part(two, 'no_stream', [petAdded(two)])], metadata);
        assert.deepEqual(appended.versions, [1, 1]);
        const moved = await ports.eventStore.append([part(one, 1, [toPending(one, null)], 'pending'), part(two, 1, [toPending(two, null)], 'pending')], metadata);
        assert.deepEqual([moved.version, moved.versions], [2, [2, 2]]);
        const events = await ports.eventLog.readLog({ after: moved.position - 2, limit: 10 });
        assert.deepEqual(events.map((stored) => [stored.streamId, stored.streamVersion]), [[`pet-${one}`, 2], [`pet-${two}`, 2]]);
        assert.equal(events.at(-1)?.position, moved.position);
        assert.equal((await ports.catalog.get(one))?.pet.status, 'pending');
        assert.deepEqual(await ports.catalog.get(two), { pet: { id: two, name: 'A', categoryId: 1, status: 'pending' }, version: 2 });
      });

      it('refuses the whole append when one stream moved, naming it, and writes nothing to any', async () => {
        const [one, two] = [freshId(), freshId()];
        await append(`pet-${one}`, 'no_stream', [petAdded(one)], metadata);
        await append(`pet-${two}`, 'no_stream', [petAdded(two)], metadata);
        await append(`pet-${two}`, 1, [toPending(two, null)], metadata);
        const end = await ports.eventLog.end();
        await assert.rejects(
          ports.eventStore.append([part(one, 1, [toPending(one, null)], 'pending'), part(two, 1, [toPending(two, null)], 'pending')], metadata),
          (error: unknown) => error instanceof StreamVersionConflict && error.streamId === `pet-${two}` && error.actual === 2,
        );
        assert.equal(await ports.eventLog.end(), end, 'no event of either stream');
        assert.equal((await ports.eventStore.readStream(`pet-${one}`)).version, 1);
        assert.deepEqual(await ports.catalog.get(one), { pet: { id: one, name: 'A', categoryId: 1 }, version: 1 });
      });

      it('checks a stream the append reads but does not write: a moved one refuses the append', async () => {
        const [one, two] = [freshId(), freshId()];
        await append(`pet-${one}`, 'no_stream', [petAdded(one)], metadata);
        await append(`pet-${two}`, 'no_stream', [petAdded(two)], metadata);
        await append(`pet-${two}`, 1, [toPending(two, null)], metadata);
        await assert.rejects(ports.eventStore.append([part(one, 1, [toPending(one, null)], 'pending'), part(two, 1, [])], metadata), StreamVersionConflict);
        assert.equal((await ports.eventStore.readStream(`pet-${one}`)).version, 1);
        const passed = await ports.eventStore.append([part(one, 1, [toPending(one, null)], 'pending'), part(two, 2, [])], metadata);
        assert.deepEqual(passed.versions, [2, 2]);
      });

      it('lets one of many concurrent appends over a shared stream win; the others write nothing', async () => {
        const shared = freshId();
        await append(`pet-${shared}`, 'no_stream', [petAdded(shared, 'A', 'available')], metadata);
        const others = Array.from({ length: 8 }, () => freshId());
        for (const id of others) await append(`pet-${id}`, 'no_stream', [petAdded(id)], metadata);
        const outcomes = await Promise.allSettled(others.map((id) => ports.eventStore.append([
          part(id, 1, [toPending(id, null)], 'pending'), part(shared, 1, [toPending(shared, 'available')], 'pending'),
        ], metadata)));
        assert.equal(outcomes.filter((outcome) => outcome.status === 'fulfilled').length, 1);
        for (const outcome of outcomes) if (outcome.status === 'rejected') assert.ok(outcome.reason instanceof StreamVersionConflict, String(outcome.reason));
        const moved = await Promise.all(others.map(async (id) => (await ports.eventStore.readStream(`pet-${id}`)).version));
        assert.deepEqual(moved.sort(), [1, 1, 1, 1, 1, 1, 1, 2]);
        assert.equal((await ports.eventStore.readStream(`pet-${shared}`)).version, 2);
      });

      it('creates a stream beside an append to another in one commit, or neither when the other moved', async () => {
        const other = freshId();
        await append(`pet-${other}`, 'no_stream', [petAdded(other, 'A', 'available')], metadata);
        const alongside = (expected: ExpectedVersion) => (id: number) => ({
          streams: [
            { streamId: `pet-${id}`, expected: 'no_stream' as const, events: [petAdded(id)], stateAfter: { kind: 'present', pet: { id, name: 'A', categoryId: 1 } } },
            part(other, expected, [toPending(other, 'available')], 'pending'),
          ],
          metadata,
        });
        const created = await ports.eventStore.create('pet', alongside(1));
        assert.deepEqual(created.versions, [1, 2]);
        assert.equal((await ports.catalog.get(created.id))?.version, 1);
        assert.equal((await ports.catalog.get(other))?.pet.status, 'pending');
        let refusedId = 0;
        await assert.rejects(ports.eventStore.create('pet', (id) => ((refusedId = id), alongside(1)(id))), StreamVersionConflict);
        assert.equal(await ports.catalog.get(refusedId), undefined, 'the new stream was not written');
        assert.equal((await ports.eventStore.readStream(`pet-${refusedId}`)).version, 0);
        assert.ok((await createPet(ports.eventStore, (id) => ({ streamId: `pet-${id}`, events: [petAdded(id)], metadata, options: { petAfter: { id, name: 'A', categoryId: 1 } } }))).id > refusedId,
          'the refused creation\'s id stays taken');
      });

      it('builds a creation from the streams it reads as they stand under the write lock; a build that refuses takes no id', async () => {
        const other = freshId();
        await append(`pet-${other}`, 'no_stream', [petAdded(other, 'A', 'available')], metadata);
        const seen: (readonly StreamAtVersion[])[] = [];
        // Holds the other pet when it is available; refuses otherwise.
        const holding = (id: number, read: readonly StreamAtVersion[]) => {
          seen.push(read);
          const [pet] = read;
          const state = pet!.state as { kind: string; pet?: { status?: string } };
          if (state.pet?.status !== 'available') throw new RangeError(`pet ${other} is not available`);
          return {
            streams: [
              { streamId: `pet-${id}`, expected: 'no_stream' as const, events: [petAdded(id)], stateAfter: { kind: 'present', pet: { id, name: 'A', categoryId: 1 } } },
              part(other, pet!.version, [toPending(other, 'available')], 'pending'),
            ],
            metadata,
          };
        };
        const created = await ports.eventStore.create('pet', holding, [`pet-${other}`]);
        assert.deepEqual(seen.at(-1), [{ state: { kind: 'present', pet: { id: other, name: 'A', categoryId: 1, status: 'available' } }, version: 1 }]);
        assert.deepEqual(created.versions, [1, 2]);
        await assert.rejects(ports.eventStore.create('pet', holding, [`pet-${other}`]), RangeError);
        assert.deepEqual(seen.at(-1), [{ state: { kind: 'present', pet: { id: other, name: 'A', categoryId: 1, status: 'pending' } }, version: 2 }]);
        const next = await createPet(ports.eventStore, (id) => ({ streamId: `pet-${id}`, events: [petAdded(id)], metadata, options: { petAfter: { id, name: 'A', categoryId: 1 } } }));
        assert.equal(next.id, created.id + 1, 'the refused build took no id');
      });
    });

    describe('reading', () => {
      it('reads a stream in version order with its metadata, and an unknown stream as version 0', async () => {
        const id = freshId();
        await append(`pet-${id}`, 'no_stream', [petAdded(id)], metadata);
        const change: PetEvent = { type: 'PetStatusChanged', data: { id, from: null, to: 'available' } };
        await append(`pet-${id}`, 1, [change], metadata);
        const stream = await ports.eventStore.readStream(`pet-${id}`);
        assert.equal(stream.version, 2);
        assert.deepEqual(stream.events.map((stored) => [stored.streamVersion, stored.event]), [[1, petAdded(id)], [2, change]]);
        assert.deepEqual(stream.events.map((stored) => stored.metadata), [
          { schemaVersion: currentSchemaVersion('PetAdded'), ...metadata },
          { schemaVersion: currentSchemaVersion('PetStatusChanged'), ...metadata },
        ]);
        assert.deepEqual(await ports.eventStore.readStream('pet-none'), { version: 0, events: [] });
      });

      it('reads the whole log in position order, in pages, positions only growing', async () => {
        const ids = [freshId(), freshId(), freshId()];
        for (const id of ids) await append(`pet-${id}`, 'no_stream', [petAdded(id)], metadata);
        const all = [];
        for (let after = 0; ; ) {
          const page = await ports.eventLog.readLog({ after: after, limit: 2 });
          if (page.length === 0) break;
          all.push(...page);
          after = page.at(-1)!.position;
        }
        const positions = all.map((stored) => stored.position);
        assert.deepEqual(positions, [...positions].sort((a, b) => a - b));
        assert.equal(new Set(positions).size, positions.length);
        const lastThree = all.slice(-3).map((stored) => stored.streamId);
        assert.deepEqual(lastThree, ids.map((id) => `pet-${id}`));
      });
    });

    describe('the log by position', () => {
      it('reads the events after a position, up to a limit, as a read of the whole log has them', async () => {
        const id = freshId();
        const { position } = await append(`pet-${id}`, 'no_stream', [petAdded(id)], metadata);
        const whole = await ports.eventLog.readLog({ after: 0, limit: 1_000_000 });
        for (const [after, limit] of [[0, 1000], [position - 1, 1], [position - 1, 5], [position, 5]] as const) {
          assert.deepEqual(await ports.eventLog.readLog({ after, limit }), whole.filter((stored) => stored.position > after).slice(0, limit));
        }
        assert.deepEqual(await ports.eventLog.readLog({ after: position, limit: 10 }), []);
      });

      it('filters by event type and by pet, keeping position order', async () => {
        const [one, two] = [freshId(), freshId()];
        const first = await append(`pet-${one}`, 'no_stream', [petAdded(one)], metadata);
        await append(`pet-${two}`, 'no_stream', [petAdded(two)], metadata);
        await append(`pet-${one}`, 1, [{ type: 'PetStatusChanged', data: { id: one, from: null, to: 'pending' } }], metadata);
        await append(`pet-${two}`, 1, [{ type: 'PetStatusChanged', data: { id: two, from: null, to: 'sold' } }], metadata);
        const after = first.position - 1;
        const describe = (events: { streamId: string; event: { type: string } }[]) => events.map((stored) => [stored.streamId, stored.event.type]);
        assert.deepEqual(describe(await ports.eventLog.readLog({ after, limit: 10, streamId: `pet-${one}` })), [[`pet-${one}`, 'PetAdded'], [`pet-${one}`, 'PetStatusChanged']]);
        assert.deepEqual(describe(await ports.eventLog.readLog({ after, limit: 10, types: ['PetStatusChanged'] })), [
          [`pet-${one}`, 'PetStatusChanged'], [`pet-${two}`, 'PetStatusChanged'],
        ]);
        assert.deepEqual(describe(await ports.eventLog.readLog({ after, limit: 10, types: ['PetAdded'], streamId: `pet-${two}` })), [[`pet-${two}`, 'PetAdded']]);
        assert.deepEqual(await ports.eventLog.readLog({ after, limit: 10, types: [] }), []);
        assert.deepEqual(describe(await ports.eventLog.readLog({ after, limit: 1, types: ['PetStatusChanged'] })), [[`pet-${one}`, 'PetStatusChanged']]);
      });

      it('pages the feed with a next position while more exist, and reads one pet\'s history or refuses an unknown pet', async () => {
        const id = freshId();
        const first = await append(`pet-${id}`, 'no_stream', [petAdded(id)], metadata);
        const second = await append(`pet-${id}`, 1, [{ type: 'PetStatusChanged', data: { id, from: null, to: 'pending' } }], metadata);
        const page = await readEvents(ports, { after: first.position - 1, limit: 1, petId: id });
        assert.deepEqual([page.events.map((stored) => stored.position), page.nextAfter], [[first.position], first.position]);
        const last = await readEvents(ports, { after: first.position, limit: 1, petId: id });
        assert.deepEqual([last.events.map((stored) => stored.position), last.nextAfter], [[second.position], undefined]);
        assert.deepEqual((await readPetHistory(ports, id)).map((stored) => stored.streamVersion), [1, 2]);
        await assert.rejects(readPetHistory(ports, freshId()), PetNotFound);
      });

      it('signals each commit to its listeners once it can be read, until they unsubscribe', async () => {
        const id = freshId();
        const heard: (number | undefined)[] = [];
        let readable: Promise<number[]> | undefined;
        const unsubscribe = ports.commits.onCommitted(({ last }) => {
          heard.push(last);
          readable ??= ports.eventLog.readLog({ after: 0, limit: 1_000_000, streamId: `pet-${id}` }).then((events) => events.map((stored) => stored.streamVersion));
        });
        await append(`pet-${id}`, 'no_stream', [petAdded(id)], metadata);
        await waitFor(() => heard.length > 0);
        assert.deepEqual(await readable, [1]);
        unsubscribe();
        const count = heard.length;
        const other = freshId();
        await append(`pet-${other}`, 'no_stream', [petAdded(other)], metadata);
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.equal(heard.length, count);
      });
    });

    describe('idempotency records', () => {
      it('stores a record with the append, and refuses the same key again', async () => {
        const id = freshId();
        const record = { scope: 'k', key: `key-${id}`, fingerprint: '{"x":1}', answer: { id, name: 'A', categoryId: 1 }, expiresAt: '2999-01-01T00:00:00.000Z' };
        await append(`pet-${id}`, 'no_stream', [petAdded(id)], metadata, { remember: record });
        assert.deepEqual(await ports.idempotencyKeys.find('k', record.key, new Date()), record);
        assert.equal(await ports.idempotencyKeys.find('other', record.key, new Date()), undefined);
        const second = freshId();
        await assert.rejects(
          append(`pet-${second}`, 'no_stream', [petAdded(second)], metadata, { remember: { ...record, answer: { ...record.answer, id: second } } }),
          IdempotencyKeyTaken,
        );
        assert.equal(await ports.catalog.get(second), undefined, 'the refused append wrote nothing');
      });

      it('forgets a record once it expires', async () => {
        const id = freshId();
        const record = { scope: 'k', key: `old-${id}`, fingerprint: '{}', answer: { id, name: 'A', categoryId: 1 }, expiresAt: '2026-01-01T00:00:00.000Z' };
        await append(`pet-${id}`, 'no_stream', [petAdded(id)], metadata, { remember: record });
        assert.equal(await ports.idempotencyKeys.find('k', record.key, new Date('2026-01-02T00:00:00.000Z')), undefined);
      });
    });

    describe('use cases over this store', () => {
      it('adds, lists in id order with filters and limits, and gets with a version', async () => {
        const made = [];
        for (const status of ['available', 'pending', undefined, 'available'] as const) {
          made.push(await addPet(ports, status ? { name: `p-${status}`, categoryId: 2, status } : { name: 'p-none', categoryId: 2 }));
        }
        const ids = made.map((pet) => pet.id);
        assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
        const available = (await listPets(ports, { status: 'available', limit: 100 })).map((pet) => pet.id);
        assert.ok(available.includes(ids[0]!) && available.includes(ids[3]!) && !available.includes(ids[2]!));
        assert.deepEqual(available, [...available].sort((a, b) => a - b));
        assert.equal((await listPets(ports, { limit: 1 })).length, 1);
        assert.deepEqual(await getPet(ports, ids[2]!), { pet: { id: ids[2], name: 'p-none', categoryId: 2 }, version: 1 });
      });

      it('continues a listing after an id, and says where the next page starts', async () => {
        const made = [];
        for (let index = 0; index < 5; index++) made.push(await addPet(ports, { name: `page ${index}`, categoryId: 3, status: 'pending' }));
        const ids = made.map((pet) => pet.id);
        const continued = await listPets(ports, { after: ids[1]!, limit: 100 });
        assert.deepEqual(continued.map((pet) => pet.id).slice(0, 3), ids.slice(2));
        assert.ok(continued.every((pet) => pet.id > ids[1]!));
        const page = await listPetPage(ports, { after: ids[0]!, limit: 2, status: 'pending' });
        assert.deepEqual(page.pets.map((pet) => pet.id), ids.slice(1, 3));
        assert.equal(page.nextAfter, ids[2]);
        const last = await listPetPage(ports, { after: ids[3]!, limit: 1_00, status: 'pending' });
        assert.equal(last.nextAfter, undefined);
      });

      it('changes a status, reflected at once in the filtered listing', async () => {
        const pet = await addPet(ports, { name: 'mover', categoryId: 1, status: 'available' });
        const changed = await changePetStatus(ports, { id: pet.id, status: 'sold' });
        const { position, ...versioned } = changed;
        assert.deepEqual(versioned, { pet: { ...pet, status: 'sold' }, version: 2 });
        assert.ok(Number.isSafeInteger(position) && position > 0, `the change's log position, got ${position}`);
        assert.ok((await listPets(ports, { status: 'sold', limit: 100 })).some((listed) => listed.id === pet.id));
        assert.ok(!(await listPets(ports, { status: 'available', limit: 100 })).some((listed) => listed.id === pet.id));
      });

      it('replays a creation for the same idempotency key and body, and refuses another body', async () => {
        const first = await addPet(ports, { name: 'once', categoryId: 1 }, { apiKeyId: 'k1' }, { idempotencyKey: 'same' });
        const again = await addPet(ports, { categoryId: 1, name: 'once' }, { apiKeyId: 'k1' }, { idempotencyKey: 'same' });
        assert.deepEqual(again, first);
        await assert.rejects(addPet(ports, { name: 'twice', categoryId: 1 }, { apiKeyId: 'k1' }, { idempotencyKey: 'same' }), IdempotencyKeyReused);
        const otherCaller = await addPet(ports, { name: 'once', categoryId: 1 }, { apiKeyId: 'k2' }, { idempotencyKey: 'same' });
        assert.notEqual(otherCaller.id, first.id);
      });

      it('creates exactly one pet for concurrent creations with one key', async () => {
        const before = (await ports.eventLog.readLog({ after: 0, limit: 1_000_000 })).length;
        const answers = await Promise.all(
          Array.from({ length: 20 }, () => addPet(ports, { name: 'racer', categoryId: 1 }, { apiKeyId: 'k1' }, { idempotencyKey: 'race' })),
        );
        assert.equal(new Set(answers.map((pet) => pet.id)).size, 1);
        assert.equal((await ports.eventLog.readLog({ after: 0, limit: 1_000_000 })).length, before + 1);
      });
    });
  });
}

/** Waits (bounded) for a condition that a signal makes true soon after an await. */
async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
