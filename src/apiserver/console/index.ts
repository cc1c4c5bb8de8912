/**
 * console: orch-apiserver's read-only web console at `/console/`. It serves the page's static
 * assets (HTML, CSS and the browser modules compiled from web/ by `npm run build`), loaded into
 * memory once at start, gzip-compressed where the browser accepts it, with a strict
 * Content-Security-Policy (no inline script or style, nothing from another origin, no framing).
 * The assets are public and hold no data: the page signs in with a bearer token and reads
 * everything through the API with the user's identity, so authentication and authorization
 * apply to the browser as to kubectl. Every other path goes to the next handler (the router).
 *
 * Must not: read the store or serve any cluster data, authenticate, or load files after start.
 * The browser code in web/ is its own program (web/tsconfig.json, DOM types) and imports nothing
 * from the server.
 */
export { loadConsoleAssets, CONSOLE_ASSETS_DIR, type ConsoleAssets, type ConsoleAsset } from './assets.js';
export { withConsole, CONSOLE_PATH, CONTENT_SECURITY_POLICY, type ConsoleHandlerOptions } from './handler.js';
