"use strict";
// Letta Code's own transcript writer, taken out of its published bundle (letta.js) and run as
// is, so that the transcripts memrepo's tests import are the ones Letta Code writes.
//
//   node letta_transcripts.cjs PACKAGE_DIR < TURNS_JSON
//
// TURNS_JSON is {"root": DIR, "turns": [{"agent": ID, "conversation": ID, "at": ISO, "lines": [...]}]}.
// Each turn is one call of Letta's appendTranscriptDeltaJsonl(agent, conversation, lines), the
// call Letta Code makes at the end of every turn, with LETTA_TRANSCRIPT_ROOT=DIR and the
// clock reading `at` (the rows' captured_at). `lines` are the turn's transcript lines as
// Letta's accumulator holds them (kind, id, text, messageId, name, argsText, resultText, ...).
//
// The bundle is one ES module of many; each source module starts with a `// src/<path>`
// comment. The modules used here import only node built-ins, turned into require() calls; the
// modules they would initialise but that the writer never calls are left out.

const fs = require("node:fs");
const path = require("node:path");

const MODULES = [
  "src/utils/process-liveness.ts",
  "src/utils/sleep.ts",
  "src/utils/file-lock.ts",
  "src/cli/helpers/safe-json-parse.ts",
  "src/utils/transcript-paths.ts",
  "src/cli/helpers/reflection-transcript.ts",
];
const UNUSED_INITS = [
  "init_dist11", "init_memory_filesystem2", "init_context_budget", "init_backend2",
  "init_conversation_search", "init_directory_limits",
];
const PRELUDE = "var __esm = (fn, res) => () => (fn && (res = fn(fn = 0)), res);\n"
  + UNUSED_INITS.map((name) => `function ${name}() {}`).join("\n");

function moduleSource(bundle, name) {
  const marker = `\n// ${name}\n`;
  const start = bundle.indexOf(marker);
  if (start < 0) throw new Error(`letta.js has no module ${name}: Letta Code moved its code`);
  const next = bundle.slice(start + marker.length).search(/^\/\/ (?:src|node_modules)\/\S+$/m);
  const end = next < 0 ? bundle.length : start + marker.length + next;
  return bundle.slice(start, end).replace(
    /^import\s*\{([^}]*)\}\s*from\s*"(node:[^"]+)";/gm,
    (_, names, from) => `const { ${names.split(",").map((n) => n.trim()).filter(Boolean)
      .map((n) => n.replace(/\s+as\s+/, ": ")).join(", ")} } = require(${JSON.stringify(from)});`,
  );
}

// A Date whose `new Date()` is the current turn's moment; everything else is the real Date.
let moment = null;
class TurnDate extends Date {
  constructor(...args) {
    if (args.length === 0 && moment !== null) super(moment);
    else super(...args);
  }
}

async function main() {
  const packageDir = process.argv[2];
  const input = JSON.parse(fs.readFileSync(0, "utf8"));
  const bundle = fs.readFileSync(path.join(packageDir, "letta.js"), "utf8");
  const code = `${PRELUDE}\n${MODULES.map((name) => moduleSource(bundle, name)).join("\n")}\n`
    + "init_file_lock();\ninit_reflection_transcript();\nreturn appendTranscriptDeltaJsonl;";
  const append = new Function("require", "Date", code)(require, TurnDate);
  process.env.LETTA_TRANSCRIPT_ROOT = input.root;
  for (const turn of input.turns) {
    moment = turn.at;
    await append(turn.agent, turn.conversation, turn.lines);
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : String(error));
  process.exit(1);
});
