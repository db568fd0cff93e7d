"use strict";
// Letta Code's own shared-memory rules, taken out of its published bundle (letta.js) and run as is.
//
//   node letta_shared.cjs PACKAGE_DIR AGENT_ID NAMES_JSON
//       For each name: where Letta mounts that attached repository for AGENT_ID
//       (getRepositoryMountDir, under $HOME as Letta's harness resolves it) or why its
//       validateAgentRepositoryName refuses the name; and the names in the order Letta lists
//       attached repositories (the comparator of its shared-memory skills discovery).
//       Prints {"mounts": {name: dir|null}, "refused": {name: message|null}, "order": [...]}.
//
// Each function is cut out of the bundle by its `function NAME(` line up to the first line that
// closes it; the bundle's renamed imports of node:path and node:os (join16, dirname8, ...) are
// given their node built-ins.

const fs = require("node:fs");
const path = require("node:path");
const os = require("node:os");

const FUNCTIONS = ["getAgentRootDir", "getMemoryRepoDir", "getRepositoryMountDir", "validateAgentRepositoryName"];
const BUILTINS = { join: path.join, dirname: path.dirname, homedir: os.homedir };

function cut(bundle, name) {
  const start = bundle.indexOf(`\nfunction ${name}(`);
  if (start < 0) throw new Error(`letta.js has no function ${name}: Letta Code moved its code`);
  const end = bundle.indexOf("\n}\n", start);
  return bundle.slice(start + 1, end + 2);
}

function comparator(bundle) {
  const found = /for \(const repository of repositories\.sort\(((?:\([^)]*\)) => [^\n]*?)\)\) \{/.exec(bundle);
  if (found === null) throw new Error("letta.js has no sort of attached repositories: Letta Code moved its code");
  return found[1];
}

function load(bundle) {
  const scope = new Proxy({}, {
    has: (_, key) => typeof key === "string" && /^(join|dirname|homedir)\d*$/.test(key),
    get: (_, key) => BUILTINS[String(key).replace(/\d+$/, "")],
  });
  const code = `with (scope) {\n${FUNCTIONS.map((name) => cut(bundle, name)).join("\n")}\n`
    + `return { ${FUNCTIONS.join(", ")}, compare: ${comparator(bundle)} };\n}`;
  return new Function("scope", code)(scope);
}

function main(packageDir, agentId, names) {
  const letta = load(fs.readFileSync(path.join(packageDir, "letta.js"), "utf8"));
  const mounts = {};
  const refused = {};
  for (const name of names) {
    try {
      mounts[name] = letta.getRepositoryMountDir(agentId, letta.validateAgentRepositoryName(name));
      refused[name] = null;
    } catch (error) {
      mounts[name] = null;
      refused[name] = error.message;
    }
  }
  const order = names.map((name, index) => ({ name, id: `repo-${index}` })).sort(letta.compare).map((r) => r.name);
  process.stdout.write(JSON.stringify({ mounts, refused, order }));
}

main(process.argv[2], process.argv[3], JSON.parse(process.argv[4]));
