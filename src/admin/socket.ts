import { join, resolve } from 'node:path';

/** The operator API's Unix socket in embedded mode: inside DATA_DIR, mode 0600 (CONTRACT.md section 8). */
export const adminSocketPath = (dataDir: string) => join(resolve(dataDir), 'admin.sock');
