import type { Logger } from '../../src/log/logger.js';

/** A logger that keeps each line as `<level> <message> <fields as JSON>`. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at =
    (l: string) =>
    (msg: string, fields: Record<string, unknown> = {}) =>
      lines.push(`${l} ${msg} ${JSON.stringify(fields)}`);
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
