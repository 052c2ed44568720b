import { ApiError } from '../../../contract/errors.js';
import { holdsControl, type Form } from '../../plugins/forms.js';

/**
 * The roster upload's body: multipart/form-data (RFC 7578) with a few text fields and one file,
 * read whole (bounded by the route's body limit) into the console's Form, one value per name,
 * refused as the form parser refuses (a name given twice, a control character; tab, CR and LF
 * allowed in the file and the CSV field only). A file part's bytes are read as UTF-8 text. Only
 * this route takes multipart: no dependency is added for one form (@fastify/multipart is not one).
 */
export const UPLOAD_LIMIT_BYTES = 8 * 1024 * 1024;
const TEXT_FIELDS_WITH_LINES = new Set(['file', 'csv']);

const bad = (why: string) => new ApiError('invalid_request', `The upload ${why}.`);

export function boundaryOf(contentType: string): string {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  const b = m?.[1] ?? m?.[2];
  if (!b) throw bad('has no multipart boundary');
  return b;
}

export function parseMultipart(body: Buffer, contentType: string): Form {
  const delimiter = Buffer.from(`--${boundaryOf(contentType)}`);
  const form: Form = {};
  let at = body.indexOf(delimiter);
  if (at < 0) throw bad('is not multipart/form-data');
  for (;;) {
    at += delimiter.length;
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return form; // the closing delimiter
    if (body[at] !== 0x0d || body[at + 1] !== 0x0a) throw bad('is malformed');
    const headersEnd = body.indexOf('\r\n\r\n', at + 2);
    if (headersEnd < 0) throw bad('is malformed');
    const headers = body.subarray(at + 2, headersEnd).toString('utf8');
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headersEnd + 4);
    if (next < 0) throw bad('is cut short');
    const disposition = /^content-disposition:\s*form-data\s*;(.*)$/im.exec(headers)?.[1];
    const name = disposition ? /(?:^|;)\s*name="([^"]*)"/i.exec(disposition)?.[1] : undefined;
    if (name === undefined) throw bad('has a part without a name');
    const value = body.subarray(headersEnd + 4, next).toString('utf8');
    if (holdsControl(name)) throw bad("has a field's name with a control character");
    if (holdsControl(value, TEXT_FIELDS_WITH_LINES.has(name)))
      throw bad(`field '${name}' holds a control character (such as NUL), which the console does not accept`);
    if (Object.hasOwn(form, name)) throw bad(`gives the field '${name}' more than once`);
    form[name] = value;
    at = next + 2;
  }
}
