/**
 * The database handle that domain operations take. Faces (routes, the CLI, jobs) hold one and pass
 * it in; they name it from here, so that nothing above the domain imports src/db/.
 */
export type { DatabaseExecutor, Queryable, Transaction } from '../db/executor.js';
