/** The version of nodeagent and orch-apiserver (kept equal to package.json's by a test). */
export const VERSION = 'v0.1.0';
