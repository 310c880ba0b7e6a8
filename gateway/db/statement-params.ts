/**
 * The parameters of one statement built from parts (several CTEs of one `WITH`): each part adds its
 * values and writes the placeholder it was given, so no part counts `$n` by hand.
 *
 * @example const p = new StatementParams(); const sql = `SELECT ${p.add(id)}::text`; await db.query(sql, p.values);
 */
export class StatementParams {
  readonly values: unknown[] = [];

  /** Adds a value; its placeholder (`$1`, `$2`…). */
  add(value: unknown): string {
    return `$${this.values.push(value)}`;
  }

  /** Adds each value, in order; their placeholders joined with commas. */
  list(values: readonly unknown[]): string {
    return values.map((value) => this.add(value)).join(', ');
  }
}
