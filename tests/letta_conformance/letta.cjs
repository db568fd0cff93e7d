"use strict";
// Letta Code's own memory code, taken out of its published bundle (letta.js) and run as is.
//
//   node letta.cjs extract PACKAGE_DIR OUT_DIR
//       Installs Letta's pre-commit hook and constraints validator into OUT_DIR/<policy>/.git
//       with Letta's own installer, for each layout policy, and writes OUT_DIR/memory-tool.cjs:
//       Letta's memory tool command code (no backend, no commit), for `tool` below.
//   node OUT_DIR/memory-tool.cjs MEMORY_DIR FORMAT ARGS_JSON
//       Applies one memory tool call to MEMORY_DIR the way Letta's tool does (memfs-v1 or
//       memfs-v2) and prints {"ok": true, "paths": [...]} or {"ok": false, "error": "..."}.
//   LETTA_TRANSCRIPT_ROOT=DIR node OUT_DIR/transcript.cjs AGENT_ID CONVERSATION_ID LINES_JSON
//       Appends one turn's lines to the agent's conversation transcript the way Letta does at
//       the end of a turn (`appendTranscriptDeltaJsonl`: every row stamped with the moment of
//       the append) and prints how many rows it wrote.
//
// The bundle is one ES module of many; each source module starts with a `// src/<path>`
// comment. The modules used here import only node built-ins, turned into require() calls.

const fs = require("node:fs");
const path = require("node:path");
const { execFileSync } = require("node:child_process");

const HOOK_MODULES = [
  "src/memory-frontmatter.ts",
  "src/memory-constraints.ts",
  "src/agent/memory-constraints.ts",
  "src/agent/memory-git-hooks.ts",
];
const TOOL_MODULES = [
  "src/agent/memory-format.ts",
  "src/agent/memory-markdown.ts",
  "src/tools/impl/memory.ts",
];
const TRANSCRIPT_MODULES = [
  "src/utils/process-liveness.ts",
  "src/utils/sleep.ts",
  "src/utils/file-lock.ts",
  "src/utils/transcript-paths.ts",
  "src/cli/helpers/safe-json-parse.ts",
  "src/cli/helpers/reflection-transcript.ts",
];
// The modules reflection-transcript.ts initialises first serve its other functions (memory
// snapshots, search, budgets), none of which the append reaches: their initialisers do nothing here.
const TRANSCRIPT_UNUSED_INITS = ["init_dist11", "init_memory_filesystem2", "init_context_budget", "init_backend2",
  "init_conversation_search", "init_directory_limits"];
const PRELUDE = [
  "var __esm = (fn, res) => () => (fn && (res = fn(fn = 0)), res);",
  "function debugLog() {}",
  "function init_debug() {}",
].join("\n");

function modules(bundle, names) {
  const starts = [];
  const marker = /^\/\/ ((?:src|node_modules)\/\S+)$/gm;
  let match;
  while ((match = marker.exec(bundle)) !== null) starts.push({ name: match[1], at: match.index });
  return names.map((name) => {
    const index = starts.findIndex((item) => item.name === name);
    if (index < 0) throw new Error(`letta.js has no module ${name}: Letta Code moved its code`);
    const end = index + 1 < starts.length ? starts[index + 1].at : bundle.length;
    return requires(bundle.slice(starts[index].at, end));
  }).join("\n");
}

function requires(code) {
  return code.replace(/^import\s*\{([^}]*)\}\s*from\s*"(node:[^"]+)";/gm, (_, names, from) => {
    const bindings = names.split(",").map((item) => item.trim()).filter(Boolean)
      .map((item) => item.replace(/\s+as\s+/, ": "));
    return `const { ${bindings.join(", ")} } = require(${JSON.stringify(from)});`;
  });
}

function extract(packageDir, outDir) {
  const bundle = fs.readFileSync(path.join(packageDir, "letta.js"), "utf8");
  const hooks = new Function("require", `${PRELUDE}\n${modules(bundle, HOOK_MODULES)}\n`
    + "init_memory_git_hooks();\nreturn { installPreCommitHook, installSharedMemoryPreCommitHook };")(require);
  for (const policy of ["legacy-only", "root-marker", "shared-memory"]) {
    const dir = path.join(outDir, policy);
    fs.mkdirSync(path.join(dir, ".git"), { recursive: true });
    if (policy === "shared-memory") hooks.installSharedMemoryPreCommitHook(dir);
    else hooks.installPreCommitHook(dir, policy === "root-marker");
  }
  const tool = `"use strict";\n// Letta Code's memory tool commands, from ${packageDir}/letta.js.\n${PRELUDE}\n`
    + `${modules(bundle, TOOL_MODULES)}\n` + TOOL_MAIN;
  fs.writeFileSync(path.join(outDir, "memory-tool.cjs"), tool, "utf8");
  const transcript = `"use strict";\n// Letta Code's transcript writer, from ${packageDir}/letta.js.\n${PRELUDE}\n`
    + TRANSCRIPT_UNUSED_INITS.map((name) => `function ${name}() {}`).join("\n") + "\n"
    + `${modules(bundle, TRANSCRIPT_MODULES)}\n` + TRANSCRIPT_MAIN;
  fs.writeFileSync(path.join(outDir, "transcript.cjs"), transcript, "utf8");
}

const TRANSCRIPT_MAIN = `
init_reflection_transcript();
const [agentId, conversationId, linesJson] = process.argv.slice(2);
appendTranscriptDeltaJsonl(agentId, conversationId, JSON.parse(linesJson)).then(
  (count) => console.log(JSON.stringify({ ok: true, count })),
  (error) => { console.error(error instanceof Error ? error.stack : String(error)); process.exit(1); },
);
`;

const TOOL_MAIN = `
const [memoryDir, format, argsJson] = process.argv.slice(2);
applyMemoryCommand(memoryDir, JSON.parse(argsJson), format).then(
  (paths) => console.log(JSON.stringify({ ok: true, paths })),
  (error) => console.log(JSON.stringify({ ok: false, error: error instanceof Error ? error.message : String(error) })),
);
`;

const [command, ...rest] = process.argv.slice(2);
if (command === "extract") extract(rest[0], rest[1]);
else {
  console.error("usage: node letta.cjs extract PACKAGE_DIR OUT_DIR");
  process.exit(2);
}
