/**
 * The configured database cannot be served from (damaged, not a database, cannot be opened). Its
 * message names the database and the reason, and is all a person starting the service needs to see.
 */
export class DatabaseUnusable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseUnusable';
  }
}
