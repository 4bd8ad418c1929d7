// Compiles N distinct constraint schemas (each with its own pattern, as delegated grants carry)
// through one compiler and prints the heap growth after a full GC. Run with --expose-gc by
// test/core/schema-generations.test.ts and bench/abuse.ts; it imports the built dist/.
const [moduleUrl, count, perGeneration] = process.argv.slice(2);
const { createSchemaCompiler } = await import(moduleUrl);
const n = Number(count);
const per = Number(perGeneration);
const compiler = createSchemaCompiler(per > 0 ? { schemasPerGeneration: per } : {});
const schema = (i) => ({ type: "object", properties: { to: { type: "string", pattern: `^user${i}@example\\.com$` } } });
globalThis.gc();
const before = process.memoryUsage().heapUsed;
let wrong = 0;
for (let i = 0; i < n; i++) {
  if (compiler.compile(schema(i)).check({ to: `user${i}@example.com` }).length !== 0) wrong += 1;
}
// A schema from a dropped generation compiles again and still answers the same.
if (compiler.compile(schema(0)).check({ to: "user1@example.com" }).length !== 1) wrong += 1;
globalThis.gc();
const after = process.memoryUsage().heapUsed;
console.log(JSON.stringify({ n, perGeneration: per, growthBytes: after - before, wrong }));
