import type { ParseArgsConfig } from 'node:util';

/** A wrong command line: printed with the command's help (or the usage), exit code 2. */
export class UsageError extends Error {
  readonly help: string | undefined;

  constructor(message: string, help?: string) {
    super(message);
    this.name = 'UsageError';
    this.help = help;
  }
}

export interface ParsedArguments {
  readonly options: Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;
  /** One value per name in `Command.arguments`, in order. */
  readonly arguments: readonly string[];
  /** The environment the command was started with: configuration comes from it, as for the service. */
  readonly environment: Readonly<Record<string, string | undefined>>;
}

export interface Command {
  readonly summary: string;
  readonly help: string;
  /** Options besides --help, as node:util parseArgs takes them. */
  readonly options?: NonNullable<ParseArgsConfig['options']>;
  /** Names of the positional arguments, all required. */
  readonly arguments?: readonly string[];
  run(parsed: ParsedArguments): Promise<number>;
}

export const CONFIGURATION_NOTE = 'Configuration comes from the environment, as for the service (PETSTORE_DATABASE, ...).';

/** Rows as aligned columns, the first row the heading. */
export function printTable(rows: readonly (readonly string[])[]): void {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) process.stdout.write(`${row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()}\n`);
}
