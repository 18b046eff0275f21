/**
 * What a path that should be a regular file holds instead, as `stat(2)` tells it: a `'FIFO'` (named pipe), a
 * `'socket'`, a `'character device'` or `'block device'`, a `'directory'`, or a `'special file'` of another
 * kind. The values read as nouns in a sentence ("it is a FIFO, not a regular file").
 */
export type NonRegularFileType =
  | 'directory'
  | 'FIFO'
  | 'socket'
  | 'character device'
  | 'block device'
  | 'special file';

/**
 * Why a file could not be read or replaced: `NotRegularFile` (the path holds a FIFO, device, socket or
 * directory: {@link RegularFileError.fileType} says which; nothing was read and nothing waited),
 * `ReadFailed` (the read itself failed: {@link RegularFileError.errno}), `WriteFailed` (the replacement was
 * not written or not renamed into place: the path holds what it held before).
 */
export type RegularFileErrorCode = 'NotRegularFile' | 'ReadFailed' | 'WriteFailed';

/** The one error this package throws. `code` is stable; `message` is one line for a human, naming the path. */
export class RegularFileError extends Error {
  /** Always `'RegularFileError'`; lets {@link isRegularFileError} work across duplicate package copies. */
  override readonly name = 'RegularFileError';
  /** Discriminator. */
  readonly code: RegularFileErrorCode;
  /** The path read or replaced. */
  readonly path: string;
  /** `NotRegularFile`: what is at {@link RegularFileError.path}. */
  readonly fileType: NonRegularFileType | undefined;
  /** The errno code (`EACCES`, `EISDIR`, …) of the underlying fs error, when there is one. */
  readonly errno: string | undefined;

  /**
   * @param code - what went wrong
   * @param path - the file concerned
   * @param message - one line naming it
   * @param details - what is there instead, or the fs error behind it
   */
  constructor(
    code: RegularFileErrorCode,
    path: string,
    message: string,
    details: { readonly fileType?: NonRegularFileType; readonly cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.path = path;
    this.fileType = details.fileType;
    this.errno = errnoOf(details.cause);
  }
}

/** Whether `e` is a {@link RegularFileError} (by name, so a second copy of this package is recognised too). */
export function isRegularFileError(e: unknown): e is RegularFileError {
  return e instanceof Error && e.name === 'RegularFileError';
}

/** The errno code (`ENOENT`, …) of a Node.js fs error, if it has one. */
export function errnoOf(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string'
    ? (e as { code: string }).code
    : undefined;
}
