// axpipe's reporter for `node --test` in a gate (plugins/axpipe_builtin/gate_node.py): JUnit XML
// with each test named by its file (from the working folder) and its full name, the titles of
// the suites around it joined by " > ". Node's own junit reporter names neither.
import { relative } from "node:path";

const escape = (text) => String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c])
  .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "");

// An error's message on one line (its lines joined: an assertion's values are on the second), and
// its type: `AssertionError`, `TypeError`, ...
const oneLine = (text) => String(text ?? "").split("\n").map((line) => line.trim()).filter(Boolean).join(" / ").slice(0, 4000);

function described(error, stderr) {
  if (!error) return { type: "", message: "" };
  const cause = error.cause;
  if (cause && typeof cause === "object") {
    return { type: cause.name || cause.constructor?.name || "", message: oneLine(cause.message) };
  }
  // A file that failed as a whole (it did not load): node says "test failed"; its stderr says why.
  const why = (stderr || []).join("").split("\n").find((line) => /^[A-Za-z_$][\w$]*(\s\[[A-Z_]+\])?: /.test(line));
  if (why) {
    const [type, ...rest] = why.split(": ");
    return { type: type.replace(/\s\[.*\]$/, ""), message: rest.join(": ") };
  }
  return { type: "", message: oneLine(error.message ?? cause) };
}

export default async function* reporter(source) {
  const stacks = new Map(); // file -> suite titles by nesting level
  const stderr = new Map(); // file -> its standard error
  const cases = [];
  for await (const event of source) {
    const data = event.data ?? {};
    const file = data.file ? relative(process.cwd(), data.file) : "";
    if (event.type === "test:stderr") {
      stderr.set(file, [...(stderr.get(file) ?? []), String(data.message ?? "")]);
    } else if (event.type === "test:start") {
      const stack = (stacks.get(file) ?? []).slice(0, data.nesting);
      stack[data.nesting] = data.name;
      stacks.set(file, stack);
    } else if (event.type === "test:pass" || event.type === "test:fail") {
      const details = data.details ?? {};
      // A suite's result only repeats its tests' (Node before 20 gives no `type`: its failure type says it)
      if (details.type === "suite" || details.error?.failureType === "subtestsFailed") continue;
      const titles = [...(stacks.get(file) ?? []).slice(0, data.nesting), data.name];
      const name = titles.map((title) => (title === data.file ? file : title)).join(" > ");
      const skipped = data.skip !== undefined && data.skip !== false || data.todo !== undefined && data.todo !== false;
      cases.push({ file, name, skipped, error: event.type === "test:fail" ? details.error : undefined });
    }
  }
  // Written at the end: a file's standard error may come after its failure is reported.
  const written = cases.map(({ file, name, skipped, error }) => {
    let body = "";
    if (skipped) {
      body = "<skipped/>";
    } else if (error !== undefined) {
      const { type, message } = described(error, stderr.get(file));
      body = `<failure type="${escape(type)}" message="${escape(message)}"/>`;
    }
    return `  <testcase classname="${escape(file)}" name="${escape(name)}">${body}</testcase>\n`;
  });
  yield `<?xml version="1.0" encoding="utf-8"?>\n<testsuite name="node --test">\n${written.join("")}</testsuite>\n`;
}
