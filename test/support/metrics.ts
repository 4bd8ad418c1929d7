import { expect } from "vitest";

/** Scrapes `address` and answers each sample's value by its name and labels as printed (`name{a="b"}`). */
export async function scrape(address: string): Promise<Map<string, number>> {
  const res = await fetch(`http://${address}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of (await res.text()).split("\n")) {
    const m = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) samples.set(m[1] as string, Number(m[2]));
  }
  return samples;
}

export const AUTHORIZE_OK =
  'charter_rpc_duration_seconds_count{method="/charter.v1.AuthorityService/Authorize",status="OK"}';
export const ALLOWS = 'charter_decisions_total{verdict="allow",reason=""}';
