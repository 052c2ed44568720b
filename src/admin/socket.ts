import { lstatSync, type Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import { checkDataDirRoot, checkNotShared, DataDirPermissionsError } from '../db/pglite-init.js';

/** The operator API's Unix socket in embedded mode: inside DATA_DIR, mode 0600 (CONTRACT.md section 8). */
export const adminSocketPath = (dataDir: string) => join(resolve(dataDir), 'admin.sock');

/**
 * The running server's operator socket, when the CLI may talk to it: in a DATA_DIR of the user
 * running the CLI that nobody else can enter (what the server itself requires), and itself a socket
 * of that user, not a link. Whoever owns either could answer in the server's place, take the
 * request for a new key and hand back a key of their own. Null when there is no socket; a socket
 * that cannot be trusted is refused with one line saying why.
 */
export function trustedAdminSocket(dataDir: string): string | null {
  const dir = resolve(dataDir);
  if (!checkDataDirRoot(dir)) return null;
  const path = adminSocketPath(dir);
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  checkNotShared(dir); // others who may write in it could swap the socket
  if (!st.isSocket()) throw new DataDirPermissionsError(`${path} is not the server's socket (it is not a socket); remove it and try again`);
  const me = process.getuid?.();
  if (me !== undefined && st.uid !== me) {
    throw new DataDirPermissionsError(
      `the operator socket ${path} belongs to uid ${st.uid}, not to uid ${me} that runs climate-pulse; run the command as the user that runs the server`,
    );
  }
  return path;
}
