// What Koa sends for a JSON body; set by hand where a body is already JSON text (a cached listing, an Error).
export const JSON_TYPE = 'application/json; charset=utf-8';
