/**
 * The metrics and tracing settings: the metrics address is `host:port`, the allow-remote switch a
 * boolean (`true`/`false` in the environment), the OTLP endpoint an http(s) URL. Normalizes the
 * switch in `raw` to a boolean.
 */
export function telemetryProblems(raw: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const listen = raw["metricsListen"];
  if (typeof listen !== "string") problems.push("metricsListen must be a string");
  else if (listen !== "" && !/^(?:\[[^\]]+\]|[^:[\]]+):\d{1,5}$/.test(listen))
    problems.push(`metricsListen must be host:port, got "${listen}"`);
  const allow = raw["metricsAllowRemote"];
  if (allow === "true" || allow === "false") raw["metricsAllowRemote"] = allow === "true";
  else if (typeof allow !== "boolean") problems.push("metricsAllowRemote must be true or false");
  const endpoint = raw["tracingOtlpEndpoint"];
  if (typeof endpoint !== "string") problems.push("tracingOtlpEndpoint must be a string");
  else if (endpoint !== "" && !isHttpUrl(endpoint))
    problems.push(
      `tracingOtlpEndpoint must be an http:// or https:// URL, got "${endpoint.slice(0, 200)}"`,
    );
  return problems;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}
