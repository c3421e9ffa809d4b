// Validates the JSON texts the grammar tests generated against their schemas with ajv, an
// independent JSON Schema implementation. Input: a file of JSON lines {"schema": ..., "outputs": [text, ...]}.
// Prints each failure and exits 1 if there was any.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "../../node/package.json"));
const Ajv = require("ajv/dist/2020").default;
const addFormats = require("ajv-formats");

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv, { mode: "fast" });  // regex checks, as the grammar: "2023-02-31" is a date to both
let n_checked = 0, n_failed = 0;
for (const line of readFileSync(process.argv[2], "utf8").split("\n")) {
  if (line.trim() === "") continue;
  const { schema, outputs } = JSON.parse(line);
  const validate = ajv.compile(schema);
  for (const text of outputs) {
    n_checked++;
    let value;
    try {
      value = JSON.parse(text);
    } catch (e) {
      n_failed++;
      console.log(`not JSON: ${JSON.stringify(text)} for ${JSON.stringify(schema)}`);
      continue;
    }
    if (!validate(value)) {
      n_failed++;
      console.log(`invalid: ${JSON.stringify(text)} for ${JSON.stringify(schema)}: ${ajv.errorsText(validate.errors)}`);
    }
  }
}
console.log(`validate_json: ${n_checked} outputs, ${n_failed} invalid`);
process.exit(n_failed === 0 ? 0 : 1);
