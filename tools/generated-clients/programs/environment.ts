// What each program is given: the service's base address (…/v1) and an API key. Declared here, so the
// programs need no @types/node.
declare const process: { readonly env: Readonly<Record<string, string | undefined>>; exitCode?: number };

export const baseUrl = required('PETSTORE_BASE_URL');
export const apiKey = required('PETSTORE_API_KEY');

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
}

/** Fails the program with `message` unless `condition` holds. */
export function expect(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}
