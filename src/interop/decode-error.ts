/** A request message that cannot be turned into a domain request: `field` names the part at fault. */
export class DecodeError extends Error {
  override readonly name = "DecodeError";
  readonly field: string;
  readonly problem: string;

  constructor(field: string, problem: string) {
    super(`${field}: ${problem}`);
    this.field = field;
    this.problem = problem;
  }
}

export function isDecodeError(err: unknown): err is DecodeError {
  return err instanceof DecodeError;
}
