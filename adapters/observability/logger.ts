import pino from 'pino';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { bufferedStdout } from './log-destination.ts';

/**
 * Pretty, coloured lines for a person at a terminal in development; JSON lines everywhere else, so
 * staging, production and anything piped (a file, jq, a log shipper) get one parseable object per line.
 */
export function logFormat(deployment: Config['deployment'], isTerminal: boolean): 'pretty' | 'json' {
  return deployment === 'development' && isTerminal ? 'pretty' : 'json';
}

export async function createLogger(config: Pick<Config, 'deployment' | 'logLevel'>, isTerminal = process.stdout.isTTY === true): Promise<Logger> {
  if (logFormat(config.deployment, isTerminal) === 'json') return pino({ level: config.logLevel }, bufferedStdout());
  // Loaded only here: staging and production never load it.
  const { default: pretty } = await import('pino-pretty');
  return pino({ level: config.logLevel }, pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
}
