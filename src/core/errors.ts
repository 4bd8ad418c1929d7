/** One thing wrong with a catalog or policy document. */
export interface LoadProblem {
  /** The file (or other origin) the document came from. */
  readonly file: string;
  /** The action, source or profile the problem is about, when there is one. */
  readonly subject?: string;
  readonly message: string;
}

/**
 * A catalog or policy that cannot be used. It lists every problem found, each naming the file,
 * the action (or source) and what is wrong: a rule that could never match is refused here, not
 * discovered as a silent deny-all at run time.
 */
export class LoadError extends Error {
  override readonly name = "LoadError";
  readonly problems: readonly LoadProblem[];

  constructor(problems: readonly LoadProblem[]) {
    super(problems.map(formatProblem).join("\n"));
    this.problems = problems;
  }
}

function formatProblem(p: LoadProblem): string {
  return p.subject === undefined
    ? `${p.file}: ${p.message}`
    : `${p.file}: ${p.subject}: ${p.message}`;
}

/** True when `err` is a LoadError. */
export function isLoadError(err: unknown): err is LoadError {
  return err instanceof LoadError;
}

/** Collects problems while a document is checked, then throws them all at once. */
export class ProblemList {
  readonly #file: string;
  readonly #problems: LoadProblem[] = [];

  constructor(file: string) {
    this.#file = file;
  }

  add(subject: string | undefined, message: string): void {
    this.#problems.push(
      subject === undefined
        ? { file: this.#file, message }
        : { file: this.#file, subject, message },
    );
  }

  get size(): number {
    return this.#problems.length;
  }

  throwIfAny(): void {
    if (this.#problems.length > 0) throw new LoadError(this.#problems);
  }
}
