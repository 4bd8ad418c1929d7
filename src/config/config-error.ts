/** A configuration that cannot be used; the message lists every problem. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export function isConfigError(err: unknown): err is ConfigError {
  return err instanceof ConfigError;
}
