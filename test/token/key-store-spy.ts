import type { KeyStore } from "../../src/store/port.js";

/**
 * A spy in front of a real KeyStore (never a fake one): it counts key reads, can run a hook
 * before the next insert (to let a "concurrent" replica act), and forwards to `target`, which a
 * test may point at another real store (a closed one, to make the store unavailable).
 */
export interface KeyStoreSpy extends KeyStore {
  target: KeyStore;
  /** How many times listKeys was called. */
  lists: number;
  /** When set, the next insertKey or insertKeyUnlessActive calls this first, then forgets it. */
  beforeInsert: (() => Promise<void>) | undefined;
}

export function spyKeyStore(target: KeyStore): KeyStoreSpy {
  const spy: KeyStoreSpy = {
    target,
    lists: 0,
    beforeInsert: undefined,
    listKeys() {
      spy.lists += 1;
      return spy.target.listKeys();
    },
    async insertKey(key) {
      const hook = spy.beforeInsert;
      spy.beforeInsert = undefined;
      if (hook) await hook();
      return spy.target.insertKey(key);
    },
    async insertKeyUnlessActive(key) {
      const hook = spy.beforeInsert;
      spy.beforeInsert = undefined;
      if (hook) await hook();
      return spy.target.insertKeyUnlessActive(key);
    },
    retireKey(kid, at) {
      return spy.target.retireKey(kid, at);
    },
    rewrapKey(kid, expected, next) {
      return spy.target.rewrapKey(kid, expected, next);
    },
  };
  return spy;
}
