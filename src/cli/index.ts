import { buildProgram, printCliError } from './program.js';

try {
  await buildProgram().parseAsync(process.argv);
} catch (err) {
  printCliError(err);
  process.exitCode = 1;
}
