// Prints the plain closing line CI reads ("N passed, N failed, N skipped") for every report given (.ci/run: both passes and the README on Node 24).
import { existsSync, readFileSync } from 'node:fs';

let passed = 0,
  failed = 0,
  skipped = 0,
  missing = 0;
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) {
    missing++;
    console.log(`${file}: no report (the run did not reach the tests)`);
    continue;
  }
  const r = JSON.parse(readFileSync(file, 'utf8'));
  console.log(`${file}: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
  passed += r.numPassedTests;
  // A file that failed without a failed test (it did not load) counts once.
  failed += r.numFailedTests > 0 ? r.numFailedTests : (r.numFailedTestSuites ?? 0);
  skipped += r.numPendingTests + r.numTodoTests;
}
console.log(`tests: ${passed} passed, ${failed + missing} failed, ${skipped} skipped`);
process.exit(failed + missing > 0 || passed === 0 ? 1 : 0);
