import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stdout, one line per request or batch. */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { ...bindings }, timestamp: pino.stdTimeFunctions.isoTime });
}
