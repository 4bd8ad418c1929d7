import { join } from "node:path";
import { openSqliteStore } from "../../src/store/index.js";
import { describeStoreContract } from "./contract.js";
import { tempDirs } from "./temp-dirs.js";

const dirs = tempDirs("charter-sqlite-contract");

describeStoreContract({
  name: "sqlite",
  open: () => openSqliteStore({ file: join(dirs.make(), "charter.db") }),
  cleanup: () => dirs.removeAll(),
});
