// The ES module entry point of hlculid/drizzle: the CommonJS module's exports, by name.
import drizzle from './hlculid-drizzle.js';

export const { hlculid, inRange } = drizzle;
export default drizzle;
