import type { SettingType } from "./types.js";

/** How a secret setting's value is shown by `charter config`: not at all, or a URL without its password. */
export type SecretKind = "value" | "url-password";

/** One setting: everything the reader, the environment, the flags, the docs and `charter config` know of it. */
export interface Setting<T, F extends string = string, C extends string = string> {
  readonly type: SettingType<T>;
  /** The value when nothing sets it; absent: the setting is required (or, for an optional one, unset). */
  readonly default?: NoInfer<T>;
  /** How the docs state the default when the value itself depends on the machine. */
  readonly defaultText?: string;
  /** The environment variable. */
  readonly env: string;
  /** The command-line flag, without `--`. */
  readonly flag?: F;
  /** What the flag's value is, in usage texts (`HOST:PORT`). */
  readonly flagValue?: string;
  /** The one command that takes the flag; absent: every command that reads configuration. */
  readonly flagCommand?: C;
  /** One line saying what it means. */
  readonly description: string;
  /**
   * What SIGHUP does to it: "content" reads the file it names again (the path stays), "restart"
   * means only a restart applies a change.
   */
  readonly reload: "content" | "restart";
  /** A secret: redacted by `charter config`. */
  readonly secret?: SecretKind;
  /** Refused in a config file (a secret): the setting to name there instead. */
  readonly fileInstead?: string;
  /** The value may be absent from the configuration (no default, not required). */
  readonly optional?: true;
}

/** Declares a setting; checks its default against its type. */
export function setting<T, const F extends string = never, const C extends string = never>(
  spec: Setting<T, F, C>,
): Setting<T, F, C> {
  return spec;
}
