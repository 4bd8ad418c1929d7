import { isJsonObject } from "../../core/json.js";
import { parseSpiffeRoles } from "../../core/spiffe-id.js";
import { parseClientRoles, rolesMapText } from "../client-roles.js";
import { parseListen } from "../listen-address.js";

/** A setting's value read into its type, or the problem (one line, never echoing a secret). */
export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

/** What a problem message may name about the setting it is about. */
export interface SettingRef {
  /** The config file key. */
  readonly key: string;
  /** The environment variable. */
  readonly env: string;
}

/**
 * How one setting's values are read and checked. A value comes from a config file (any YAML or
 * JSON value), or as text from the environment or a flag; `undefined` when nothing set it.
 */
export interface SettingType<T> {
  /** What a value looks like, for the docs ("integer ≥ 1", "host:port"…). */
  readonly shape: string;
  parse(value: unknown, ref: SettingRef): Parsed<T>;
}

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const problem = (text: string): Parsed<never> => ({ ok: false, problem: text });

/**
 * A whole number of at least `min` (0 or 1), at most `max` when given. Text must be decimal
 * digits only (no sign, exponent, fraction or spaces).
 */
export function integer(options: { min: 0 | 1; max?: number }): SettingType<number> {
  const { min, max } = options;
  return {
    shape: max === undefined ? `integer ≥ ${min}` : `integer ${min}–${max}`,
    parse(value, { key }) {
      const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
      if (typeof n !== "number" || !Number.isSafeInteger(n) || n < min)
        return problem(`${key} must be a ${min === 0 ? "non-negative" : "positive"} integer`);
      if (max !== undefined && n > max) return problem(`${key} must be at most ${max}`);
      return ok(n);
    },
  };
}

/**
 * A string. `required`: absent or empty is a problem naming where to set it. `check` answers the
 * problem with a non-empty value, if any.
 */
export function text(
  options: {
    shape?: string;
    required?: boolean;
    check?: (value: string, key: string) => string | undefined;
  } = {},
): SettingType<string> {
  return {
    shape: options.shape ?? (options.required === true ? "non-empty string" : "string"),
    parse(value, { key, env }) {
      if (options.required === true && (typeof value !== "string" || value === ""))
        return problem(`${key} is required (config file key "${key}", environment ${env})`);
      if (typeof value !== "string") return problem(`${key} must be a string`);
      const found = value === "" ? undefined : options.check?.(value, key);
      return found === undefined ? ok(value) : problem(found);
    },
  };
}

/** `host:port` (`[::1]:50051` for IPv6; port 0 picks a free port); "" only when `optional`. */
export function address(options: { required: boolean }): SettingType<string> {
  return text({
    shape: options.required ? "host:port" : 'host:port or "" (off)',
    required: options.required,
    check: (value, key) =>
      parseListen(value) === undefined ? `${key} must be host:port, got "${value}"` : undefined,
  });
}

/** An `http://` or `https://` URL, or "" (off). */
export function httpUrl(): SettingType<string> {
  return text({
    shape: 'http(s) URL or "" (off)',
    check: (value, key) =>
      isHttpUrl(value)
        ? undefined
        : `${key} must be an http:// or https:// URL, got "${value.slice(0, 200)}"`,
  });
}

/** One of `values`. */
export function choice<const V extends string>(values: readonly V[]): SettingType<V> {
  return {
    shape: `one of ${values.join(", ")}`,
    parse(value, { key }) {
      return (values as readonly unknown[]).includes(value)
        ? ok(value as V)
        : problem(`${key} must be one of ${values.join(", ")}`);
    },
  };
}

/** One of `values`, or unset (an optional setting: the code that reads it states what unset means). */
export function optionalChoice<const V extends string>(
  values: readonly V[],
): SettingType<V | undefined> {
  const one = choice(values);
  return {
    shape: one.shape,
    parse: (value, where) => (value === undefined ? ok(undefined) : one.parse(value, where)),
  };
}

/** `true` or `false` (as text from the environment or a flag). */
export function boolean(): SettingType<boolean> {
  return {
    shape: "true or false",
    parse(value, { key }) {
      if (value === "true" || value === true) return ok(true);
      if (value === "false" || value === false) return ok(false);
      return problem(`${key} must be true or false`);
    },
  };
}

/**
 * A database URL, or absent. Checked for its type only: the store reads the URL, and no message
 * may echo it (it may hold a password).
 */
export function databaseUrl(): SettingType<string | undefined> {
  return {
    shape: "postgres://…, sqlite:PATH or file:PATH",
    parse(value, { key }) {
      if (value === undefined) return ok(undefined);
      return typeof value === "string" && value !== ""
        ? ok(value)
        : problem(`${key} must be a database URL (postgres://…, sqlite:<path> or file:<path>)`);
    },
  };
}

/** Client certificate CN -> roles as `cn=role,role;cn2=role`; a config file may give a map `{cn: [roles]}`. */
export function clientRoles(): SettingType<string> {
  const asText = text({
    shape: "cn=role,role;cn2=role",
    check: (value, key) => {
      const roles = parseClientRoles(value);
      return typeof roles === "string" ? `${key}: ${roles}` : undefined;
    },
  });
  return {
    shape: asText.shape,
    parse: (value, ref) => asText.parse(isJsonObject(value) ? rolesMapText(value) : value, ref),
  };
}

/**
 * SPIFFE ID -> roles as `spiffe://td/path=role,role;spiffe://td/ns/*=role`; a config file may give
 * a map `{"spiffe://td/path": [roles]}`.
 */
export function spiffeRoles(): SettingType<string> {
  const asText = text({
    shape: "spiffe://td/path=role,role;spiffe://td/ns/*=role",
    check: (value, key) => {
      const roles = parseSpiffeRoles(value);
      return typeof roles === "string" ? `${key}: ${roles}` : undefined;
    },
  });
  return {
    shape: asText.shape,
    parse: (value, ref) => asText.parse(isJsonObject(value) ? rolesMapText(value) : value, ref),
  };
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}
