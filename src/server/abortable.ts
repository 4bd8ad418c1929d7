/**
 * A stream that ends as soon as `signal` aborts: a pending or later `next()` rejects with the
 * signal's reason, and the source is asked to stop (`return()`) without waiting for it. So a
 * handler still awaiting something cannot keep a call open past its signal.
 */
/** Read through a function, so that the compiler does not narrow it across an await. */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

export function untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const it = source[Symbol.asyncIterator]();
      let closed = false;
      const close = () => {
        if (closed) return;
        closed = true;
        it.return?.().catch(() => undefined);
      };
      const aborted = new Promise<never>((_, reject) => {
        const fail = () => {
          reject(signal.reason as Error);
        };
        if (signal.aborted) fail();
        else signal.addEventListener("abort", fail, { once: true });
      });
      aborted.catch(() => undefined);
      return {
        async next() {
          if (signal.aborted) {
            close();
            throw signal.reason;
          }
          const pending = it.next();
          pending.catch(() => undefined);
          try {
            const result = await Promise.race([pending, aborted]);
            if (result.done) closed = true;
            return result;
          } catch (err) {
            // The race may have been lost to the abort while `next()` was pending.
            if (isAborted(signal)) close();
            else closed = true;
            throw err;
          }
        },
        async return() {
          close();
          return { done: true, value: undefined };
        },
      };
    },
  };
}
