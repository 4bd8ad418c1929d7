/**
 * Preloaded into the server `bench:abuse` measures (`node --expose-gc --import …`): SIGUSR2 runs a
 * full garbage collection, so that RSS read after the abusers leave counts what the server still
 * holds, not V8 heap it has not collected yet.
 */
const gc = (globalThis as { gc?: () => void }).gc;
process.on("SIGUSR2", () => gc?.());
