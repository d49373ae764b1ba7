import { writesBesideTheLogSuite } from '../support/writes-beside-the-log.ts';

writesBesideTheLogSuite('postgres', (store) => store.boundedTransaction);
