/**
 * Cursors of the lists paged by a sequence number, newest first (the event log): the base64url of
 * the last item's `seq`. A page after a cursor holds only smaller sequence numbers, so rows inserted
 * meanwhile (always larger) never shift or repeat what a reader pages through.
 */

/** What a cursor looks like (the query schemas' pattern). */
export const CURSOR_PATTERN = '^[A-Za-z0-9_-]{1,32}$';

/** The cursor of a row's sequence number. */
export function encodeCursor(seq: string): string {
  return Buffer.from(seq, 'utf8').toString('base64url');
}

/** The sequence number of a cursor, or undefined when it is not one this gateway made. */
export function decodeCursor(cursor: string): string | undefined {
  const seq = Buffer.from(cursor, 'base64url').toString('utf8');
  return /^[1-9][0-9]{0,17}$/.test(seq) && encodeCursor(seq) === cursor ? seq : undefined;
}
