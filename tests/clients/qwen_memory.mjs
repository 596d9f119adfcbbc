// Runs Qwen Code's own memory code from its installed package, for tests/it/clients/qwen.rs.
//
//   node qwen_memory.mjs team DIR...     Qwen's team index rebuild for each project DIR
//   node qwen_memory.mjs private DIR...  Qwen's private index rebuild for each project DIR
//   node qwen_memory.mjs parse FILE...   Qwen's frontmatter reader on each file
//   node qwen_memory.mjs sort HEX...     the names (hex of UTF-8) in Qwen's tie order for files
//                                        of equal time: `localeCompare`, stable
//
// Prints one JSON array: the index each rebuild wrote (null when Qwen wrote none), or the
// document each parse gave (null when Qwen reads no memory there). Text goes out as the hex of
// the UTF-8 bytes Node writes for it, so a lone surrogate arrives as Node would store it. The package is found at
// $QWEN_CODE_PKG. Its memory functions live in one bundled chunk that exports only some of
// them, so the chunk is loaded from a copy whose relative imports point back at the package and
// that also exports the ones used here. Nothing of Qwen's is changed or copied elsewhere.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const pkg = process.env.QWEN_CODE_PKG;
if (!pkg || !fs.existsSync(path.join(pkg, "package.json"))) {
  console.error(`QWEN_CODE_PKG does not name an installed @qwen-code/qwen-code (${pkg})`);
  process.exit(2);
}
const chunks = path.join(pkg, "chunks");
const wanted = ["rebuildTeamAutoMemoryIndex", "rebuildManagedAutoMemoryIndex", "parseAutoMemoryTopicDocument"];
const file = fs
  .readdirSync(chunks)
  .find((name) => {
    const text = fs.readFileSync(path.join(chunks, name), "utf8");
    return wanted.every((fn) => text.includes(`async function ${fn}(`) || text.includes(`function ${fn}(`));
  });
if (!file) {
  console.error("no chunk of the package defines Qwen's memory index functions");
  process.exit(2);
}
const base = pathToFileURL(chunks + path.sep).href;
const source = fs
  .readFileSync(path.join(chunks, file), "utf8")
  .replace(/(from\s*|import\s*\(\s*|import\s+)"\.\/([^"]+)"/g, (_, head, name) => `${head}"${base}${name}"`);
const alias = wanted.map((fn) => `${fn} as __teammem_${fn}`).join(", ");
const copy = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "teammem-qwen-")), "memory.mjs");
fs.writeFileSync(copy, `${source}\nexport { ${alias} };\n`);
const qwen = await import(pathToFileURL(copy).href);
fs.rmSync(path.dirname(copy), { recursive: true, force: true });

const [mode, ...args] = process.argv.slice(2);
const hex = (text) => Buffer.from(text, "utf8").toString("hex");
const out = [];
for (const arg of args) {
  if (mode === "team") {
    const text = await qwen.__teammem_rebuildTeamAutoMemoryIndex(arg);
    out.push(text === null ? null : hex(text));
  } else if (mode === "private") {
    out.push(hex(await qwen.__teammem_rebuildManagedAutoMemoryIndex(arg)));
  } else if (mode === "parse") {
    const text = fs.readFileSync(arg, "utf8");
    const doc = qwen.__teammem_parseAutoMemoryTopicDocument(arg, text, 0, path.basename(arg));
    out.push(doc && { type: doc.type, title: hex(doc.title), description: hex(doc.description) });
  } else if (mode === "sort") {
    // Handled below: one sort over every argument.
  } else {
    console.error(`unknown mode ${mode}: use team, private or parse`);
    process.exit(2);
  }
}
if (mode === "sort") {
  const names = args.map((h) => Buffer.from(h, "hex").toString("utf8"));
  out.push(...[...names].sort((a, b) => a.localeCompare(b)).map(hex));
}
process.stdout.write(JSON.stringify(out));
