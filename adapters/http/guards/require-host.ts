import type { Guard } from './guards.ts';

/** Refuses what the Host rule, decided when the request began (`request-state.ts`), refused. */
export const requireHost: Guard = (_request, _response, state) => state.hostProblem;
