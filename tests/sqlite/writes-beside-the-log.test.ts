import { writesBesideTheLogSuite } from '../support/writes-beside-the-log.ts';

writesBesideTheLogSuite('sqlite', (store) => store.writeOutsideLog);
