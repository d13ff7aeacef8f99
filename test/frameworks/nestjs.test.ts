/** The adapter scenario table × NestJS on Express and on Fastify × both stores. */
import { nestDrivers } from './nestjs-drivers.js';
import { runScenarioTable } from './scenario-table.js';

await runScenarioTable(nestDrivers, 'nestjs');
