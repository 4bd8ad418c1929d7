/**
 * Where an adapter reports the audit records this process appended, once the unit of work (or
 * the group) that wrote them is durable: the store says what it did, so nobody else keeps count.
 */
export interface AuditAppends {
  /** Calls `listener` with each durable unit's count; answers the function that stops the calls. */
  readonly subscribe: (listener: (records: number) => void) => () => void;
  /** Reports `records` durable appends (nothing for 0). A listener that throws is not the store's failure. */
  readonly notify: (records: number) => void;
}

export function createAuditAppends(): AuditAppends {
  const listeners = new Set<(records: number) => void>();
  return {
    subscribe: (listener) => {
      const own = (records: number) => listener(records);
      listeners.add(own);
      return () => void listeners.delete(own);
    },
    notify: (records) => {
      if (records === 0) return;
      for (const listener of listeners) {
        try {
          listener(records);
        } catch {
          // The records are durable whatever a listener does with the news.
        }
      }
    },
  };
}
