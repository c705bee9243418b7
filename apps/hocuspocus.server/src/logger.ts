/**
 * Structured logs to stderr: stdout belongs to the stdio MCP transport and to CLI output.
 * Callers log ids, sizes and outcomes, never document text or tokens.
 */
import pino from 'pino'

export type Logger = pino.Logger

export function createLogger(level: string, name = 'collab'): Logger {
  return pino({ name, level, base: undefined }, pino.destination({ fd: 2, sync: true }))
}
