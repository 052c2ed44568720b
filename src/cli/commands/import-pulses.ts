import { Option, type Command } from 'commander';
import cliProgress from 'cli-progress';
import { ImportAborted, ImportLineTooLong, importPulses, type ImportProgress, type ImportSummary, type OnError } from '../../domain/import.js';
import { operatorActor } from '../../domain/audit.js';
import { loadConfig } from '../../config.js';
import { withDatabase } from '../db.js';
import { CliError } from '../errors.js';
import { importThroughSocket, IN_PROCESS_ADDRESS, RemoteImportFailed, runningServerSocket } from '../operator.js';

/**
 * The summary: one JSON document on stdout, with or without --json (it has always been JSON, and
 * scripts and the benches read it; docs/decisions.md, "One CLI shape"), each bad line on stderr.
 */
function printSummary(s: ImportSummary) {
  for (const p of s.problems) console.error(p.line ? `line ${p.line}: ${p.message}` : p.message);
  console.log(
    JSON.stringify({
      imported: s.imported,
      skipped: s.skipped,
      rows: s.rows,
      aborted: s.aborted,
      pulsesInFrozenWeeks: s.pulsesInFrozenWeeks,
      seconds: Number(s.seconds.toFixed(2)),
      rowsPerSecond: s.rowsPerSecond,
      peakRssMb: s.peakRssMb,
      phases: s.phases,
    }),
  );
}

export function registerImportPulses(program: Command) {
  program
    .command('import-pulses')
    .description('stream pulses from NDJSON or CSV (header row) into an organization, in one transaction')
    .requiredOption('--org <id>', 'organization id')
    .addOption(new Option('--format <format>', 'file format (default: by extension, .csv or NDJSON)').choices(['ndjson', 'csv']))
    .addOption(
      new Option('--on-error <mode>', 'abort: any bad row -> nothing is written; skip: write the good rows, report the bad')
        .choices(['abort', 'skip'])
        .default('abort'),
    )
    .argument('<file>', 'NDJSON (one pulse object a line) or CSV with columns id,level,reason,comment,moderationStatus,subteamId,createdAt')
    .option('--json', 'print the summary as one JSON document (what this command prints anyway)')
    .action(async (file: string, opts: { org: string; format?: 'ndjson' | 'csv'; onError: OnError }) => {
      const tty = Boolean(process.stderr.isTTY);
      // Two phases: reading the file (bytes), then, when rows came out of time order, moving the
      // staged ones in (rows): the bar follows each, so it never sits at 100% while work remains.
      const bar = tty
        ? new cliProgress.SingleBar(
            { format: '{phase} [{bar}] {percentage}% | {rows} rows | {rate} rows/s | ETA {eta_formatted}', stream: process.stderr },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
      const started = Date.now();
      let lastLine = 0;
      let moving = false;
      let lastMoved = 0;
      bar?.start(100, 0, { phase: 'reading', rows: 0, rate: 0 });
      const progress: ImportProgress = (bytes, total, rows, move) => {
        const rate = Math.round(rows / Math.max((Date.now() - started) / 1000, 0.001));
        if (move) {
          if (bar) {
            if (!moving) bar.setTotal(move.staged);
            bar.update(move.moved, {
              phase: 'moving rows in time order',
              rows: move.staged,
              rate: Math.round(move.moved / Math.max((Date.now() - started) / 1000, 0.001)),
            });
          } else if (move.moved - lastMoved >= 100_000 || move.moved === move.staged) {
            lastMoved = move.moved;
            console.error(`moved ${move.moved} of ${move.staged} rows that came out of time order`);
          }
          moving = true;
          return;
        }
        if (bar) bar.update(total ? Math.floor((bytes / total) * 100) : 100, { rows, rate });
        else if (rows - lastLine >= 100_000) {
          lastLine = rows;
          console.error(`imported ${rows} rows (${rate} rows/s)`);
        }
      };
      const format = opts.format ?? (/\.csv$/i.test(file) ? 'csv' : 'ndjson');
      const config = loadConfig();
      try {
        // An embedded server holds the database: the same importer runs there, fed through its socket.
        const socket = await runningServerSocket(config);
        if (socket) {
          const summary = await importThroughSocket(socket, { orgId: opts.org, file, format, onError: opts.onError, progress });
          bar?.stop();
          printSummary(summary);
          return;
        }
        await withDatabase(async (db) => {
          const summary = await importPulses(
            db,
            {
              orgId: opts.org,
              file,
              format: opts.format,
              onError: opts.onError,
              progress,
              maxLineBytes: config.importMaxLineBytes,
            },
            operatorActor(IN_PROCESS_ADDRESS),
            new Date(),
          ); // the operator on this host, as an in-process request of the operator API
          bar?.stop();
          printSummary(summary);
        });
      } catch (err) {
        bar?.stop();
        if (err instanceof RemoteImportFailed) {
          if (err.summary) printSummary(err.summary);
          throw new CliError(err.message);
        }
        if (err instanceof ImportAborted) printSummary(err.summary);
        if (err instanceof ImportLineTooLong) throw new CliError(`${file}: ${err.message}`);
        if ((err as { code?: string }).code === 'ENOENT') throw new CliError(`${file}: no such file`);
        throw err; // an ApiError prints as its message, like every PlainError
      }
    });
}
