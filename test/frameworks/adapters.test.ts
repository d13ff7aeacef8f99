/** The adapter scenario table × Express 4/5, Fastify 4/5 and Koa 2/3 × both stores. */
import { drivers } from './drivers.js';
import { runScenarioTable } from './scenario-table.js';

await runScenarioTable(drivers, 'adapters');
