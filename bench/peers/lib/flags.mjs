// Command-line flags from a table, for the benchmark scripts here: each flag names the option it
// sets and how its value is read (a converter), or `true` for a switch; --help prints the usage.
import path from 'node:path';

export const asList = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
export const asPath = (s) => path.resolve(s);
export const asInt = (min) => (s, flag) => {
  const n = Number(s);
  if (!Number.isInteger(n) || n < min) throw new Error(`${flag}: '${s}' is not an integer >= ${min}`);
  return n;
};
export const asIntList = (min) => (s, flag) => asList(s).map((x) => asInt(min)(x, flag));

// table: { '--flag': ['key', converter] | ['key', true] }. Returns a copy of defaults with the flags
// given applied; an unknown flag or a missing value throws, naming it.
export function parseFlags(argv, defaults, table, usage) {
  const a = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--help' || flag === '-h') {
      console.log(usage);
      process.exit(0);
    }
    const entry = table[flag];
    if (!entry) throw new Error(`unknown option ${flag}\n${usage}`);
    const [key, read] = entry;
    if (read === true) {
      a[key] = true;
      continue;
    }
    if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
    a[key] = read(argv[++i], flag);
  }
  return a;
}
