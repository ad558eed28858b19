/** Tandem's version, read from package.json (the one place it is written). */
import { version } from '../../package.json';

export const tandemVersion: string = version;
