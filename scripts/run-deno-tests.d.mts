/** The Deno version the project pins for its Deno tests. */
export const DENO_VERSION: string;
/** The pinned Deno's executable, installed into node_modules/.cache first when it is missing. */
export function ensureDeno(): string;
