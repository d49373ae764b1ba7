// For `--import` (or NODE_OPTIONS=--import=…): records the URL of every module the process resolves
// through the ES module loader, one a line, in the file named by $RECORD_MODULE_LOADS.
import { register } from 'node:module';

if (process.env.RECORD_MODULE_LOADS) {
  register('./module-load-hooks.mjs', import.meta.url, { data: { file: process.env.RECORD_MODULE_LOADS } });
}
