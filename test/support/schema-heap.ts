/**
 * Compiles N distinct constraint schemas (each with its own pattern, as delegated grants carry)
 * through one compiler and prints the heap growth after a full GC. Run as an ES module in a child
 * `node --expose-gc` (HEAP_MODULE, HEAP_COUNT, HEAP_PER_GENERATION in the environment); it imports
 * the built dist/.
 */
export const SCHEMA_HEAP_SCRIPT = String.raw`
const { HEAP_MODULE: moduleUrl, HEAP_COUNT: count, HEAP_PER_GENERATION: perGeneration } = process.env;
const { createSchemaCompiler } = await import(moduleUrl);
const n = Number(count);
const per = Number(perGeneration);
const compiler = createSchemaCompiler(per > 0 ? { schemasPerGeneration: per } : {});
const schema = (i) => ({ type: "object", properties: { to: { type: "string", pattern: "^user" + i + "@example\\.com$" } } });
globalThis.gc();
const before = process.memoryUsage().heapUsed;
let wrong = 0;
for (let i = 0; i < n; i++) {
  if (compiler.compile(schema(i)).check({ to: "user" + i + "@example.com" }).length !== 0) wrong += 1;
}
if (compiler.compile(schema(0)).check({ to: "user1@example.com" }).length !== 1) wrong += 1;
globalThis.gc();
const after = process.memoryUsage().heapUsed;
console.log(JSON.stringify({ n, perGeneration: per, growthBytes: after - before, wrong }));
`;
