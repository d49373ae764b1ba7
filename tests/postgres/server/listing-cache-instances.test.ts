import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { STATUS_TRANSITIONS } from '../../../domain/status-rules.ts';
import type { PetStatus } from '../../../domain/index.ts';
import { addPet } from '../../../application/index.ts';
import { rebuildReadModels } from '../../../adapters/store/read-models/read-model-maintenance.ts';
import { openPostgresPetStore } from '../../../adapters/store/postgres/postgres-pet-store.ts';
import type { RowChange } from '../../../application/index.ts';
import { createTestDatabase } from '../../support/postgres.ts';
import { startServiceProcess } from '../../support/service-process.ts';
import type { ServiceProcess } from '../../support/service-process.ts';

const KEY = 'cache-instances-key-0123456789';
const CLIENTS = 6;
const OPERATIONS_PER_CLIENT = 80;
/** Fewer pets than a page holds, so that every listing shows every pet of its filter. */
const MOST_PETS = 90;
const LISTINGS = ['limit=100', 'limit=100&status=available', 'limit=100&status=pending', 'limit=100&status=sold'] as const;

/** One write as the test saw it: sent and acknowledged at moments of the test's own clock. */
interface Write {
  readonly sent: number;
  acknowledged: number | undefined;
  readonly status: PetStatus | null;
}

interface TrackedPet {
  readonly id: number;
  /** In acknowledgement order: the test sends at most one write a pet at a time. */
  readonly writes: Write[];
  writing: boolean;
}

describe('the listing cache across instances on one PostgreSQL database', () => {
  it('no read through any instance misses a write acknowledged, through any instance, before the read was sent', { timeout: 180_000 }, async () => {
    const database = await createTestDatabase();
    const services: ServiceProcess[] = [];
    try {
      const environment = { PETSTORE_DATABASE: database.url, PETSTORE_API_KEYS: KEY };
      services.push(startServiceProcess(environment));
      await services[0]!.listening;
      services.push(startServiceProcess(environment), startServiceProcess(environment));
      const bases = await Promise.all(services.map((service) => service.listening));
      const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

      let clock = 0;
      const pets: TrackedPet[] = [];
      let creating = 0;
      let reads = 0;
      let checkedPets = 0;
      const random = (below: number) => Math.floor(Math.random() * below);
      const anyBase = () => bases[random(bases.length)]!;

      const create = async () => {
        const status = (['available', 'pending', 'sold', null] as const)[random(4)]!;
        creating += 1;
        const sent = ++clock;
        const response = await fetch(`${anyBase()}/pets`, { method: 'POST', headers, body: JSON.stringify(status === null ? { name: 'p', categoryId: 1 } : { name: 'p', categoryId: 1, status }) });
        assert.equal(response.status, 201);
        const { id } = (await response.json()) as { id: number };
        pets.push({ id, writes: [{ sent, acknowledged: ++clock, status }], writing: false });
        creating -= 1;
      };

      const change = async (pet: TrackedPet) => {
        const from = pet.writes.at(-1)!.status;
        const choices = STATUS_TRANSITIONS[from ?? 'none'];
        const status = choices[random(choices.length)]!;
        pet.writing = true;
        const write: Write = { sent: ++clock, acknowledged: undefined, status };
        pet.writes.push(write);
        const response = await fetch(`${anyBase()}/pets/${pet.id}`, { method: 'PATCH', headers, body: JSON.stringify({ status }) });
        assert.equal(response.status, 200, await response.text());
        write.acknowledged = ++clock;
        pet.writing = false;
      };

      const list = async () => {
        const query = LISTINGS[random(LISTINGS.length)]!;
        const filter = new URLSearchParams(query).get('status');
        const sent = ++clock;
        const response = await fetch(`${anyBase()}/pets?${query}`, { headers });
        assert.equal(response.status, 200);
        const listed = new Set(((await response.json()) as { id: number }[]).map((pet) => pet.id));
        const answered = ++clock;
        reads += 1;
        for (const pet of pets) {
          const known = pet.writes.filter((write) => write.acknowledged !== undefined && write.acknowledged < sent);
          // A write that was in flight while the read was may or may not show: that pet says nothing.
          if (known.length === 0 || pet.writes.some((write) => write.sent < answered && !(write.acknowledged! < sent))) continue;
          const status = known.at(-1)!.status;
          const expected = filter === null || status === filter;
          checkedPets += 1;
          assert.equal(listed.has(pet.id), expected,
            `${query}: pet ${pet.id} (${String(status)} since ${known.at(-1)!.acknowledged}) ${expected ? 'missing from' : 'still in'} a listing sent at ${sent}`);
        }
      };

      const client = async () => {
        for (let operation = 0; operation < OPERATIONS_PER_CLIENT; operation++) {
          const roll = random(10);
          const changeable = pets.filter((pet) => !pet.writing && pet.writes.at(-1)!.status !== 'sold');
          if (roll < 3 && pets.length + creating < MOST_PETS) await create();
          else if (roll < 6 && changeable.length > 0) await change(changeable[random(changeable.length)]!);
          else await list();
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, client));
      assert.ok(reads > CLIENTS * OPERATIONS_PER_CLIENT / 5, `only ${reads} reads`);
      assert.ok(checkedPets > reads, `only ${checkedPets} pets checked in ${reads} reads`);
    } finally {
      for (const service of services) service.cleanup();
      await database.drop();
    }
  });

  it("another instance's projection rebuild drops this instance's cached listings (rows changed without events)", { timeout: 60_000 }, async () => {
    const database = await createTestDatabase();
    const settings = { url: database.url, poolSize: 2, statementTimeoutMs: 10_000 };
    const here = await openPostgresPetStore(settings);
    const there = await openPostgresPetStore(settings, { migrate: false });
    try {
      await addPet(there, { name: 'rebuilt', categoryId: 1 });
      const heard: (readonly RowChange[] | undefined)[] = [];
      let told = () => {};
      here.commits.onCommitted(({ changes }) => {
        heard.push(changes);
        told();
      });
      await here.commits.refresh();
      heard.length = 0;
      const dropped = new Promise<void>((resolve) => (told = resolve));
      await rebuildReadModels(there);
      let bound: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([dropped, new Promise((_, reject) => (bound = setTimeout(() => reject(new Error('the rebuild was not heard')), 15_000)))]);
      clearTimeout(bound);
      assert.deepEqual(heard, [undefined]);
    } finally {
      await here.close();
      await there.close();
      await database.drop();
    }
  });
});
