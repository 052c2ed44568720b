import { PlainError } from '../contract/errors.js';

/** An error whose message is the whole story for the operator: printed as one line, exit 1. */
export class CliError extends PlainError {}
