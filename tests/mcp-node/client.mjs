// Drives a hivemem MCP server with the official TypeScript SDK client, so
// the server is checked by a client nobody on this project wrote.
//
// Usage:
//   node client.mjs stdio <command> [args...]     spawn the server (e.g. hivemem mcp --agent a)
//   node client.mjs http <url> [Header=value...]  connect to a streamable HTTP endpoint
//
// It lists the tools, remembers a note with a unique marker, searches for
// it, wakes up, and checks that bad input comes back as a tool error. It
// prints a JSON summary on stdout and exits 1 on the first failed check.
// The SDK validates every structured result against the tool's output
// schema, so a schema the server breaks fails here too.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const EXPECTED_TOOLS = [
  "memory_condense",
  "memory_events",
  "memory_forget",
  "memory_pin",
  "memory_purge",
  "memory_read",
  "memory_remember",
  "memory_search",
  "memory_status",
  "memory_unpin",
  "memory_wake_up",
];

function fail(msg) {
  console.error(`client.mjs: ${msg}`);
  process.exit(1);
}

function check(cond, msg) {
  if (!cond) fail(msg);
}

function transportFrom(argv) {
  const [mode, target, ...rest] = argv;
  if (mode === "stdio" && target) {
    // The SDK passes only a few safe variables to the child by default;
    // hivemem needs HIVEMEM_HOME and friends.
    return new StdioClientTransport({ command: target, args: rest, env: { ...process.env }, stderr: "inherit" });
  }
  if (mode === "http" && target) {
    const headers = {};
    for (const kv of rest) {
      const i = kv.indexOf("=");
      check(i > 0, `bad header ${JSON.stringify(kv)}: want Name=value`);
      headers[kv.slice(0, i)] = kv.slice(i + 1);
    }
    return new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
  }
  fail("usage: client.mjs stdio <command> [args...] | client.mjs http <url> [Header=value...]");
}

async function callOK(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  check(!res.isError, `${name} failed: ${JSON.stringify(res.content)}`);
  check(res.structuredContent && typeof res.structuredContent === "object", `${name}: no structured content`);
  return res;
}

async function main() {
  const client = new Client({ name: "hivemem-node-test", version: "1.0.0" });
  await client.connect(transportFrom(process.argv.slice(2)));
  const summary = { server: client.getServerVersion() };

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === JSON.stringify(EXPECTED_TOOLS), `tools = ${names}`);
  for (const t of tools) {
    check(t.description && t.inputSchema?.type === "object" && t.outputSchema?.type === "object", `${t.name}: schemas missing`);
  }
  summary.tools = names;

  const marker = `zebra${Date.now().toString(36)}${Math.floor(Math.random() * 1e6)}`;
  const heading = `node client note ${marker}`;
  const rem = await callOK(client, "memory_remember", {
    text: `The node client wrote this note; its marker is ${marker}.`,
    heading,
  });
  check(rem.structuredContent.drawers_added >= 1, `remember: ${JSON.stringify(rem.structuredContent)}`);
  summary.remembered = { agent: rem.structuredContent.agent, heading: rem.structuredContent.section.heading };
  check(summary.remembered.heading.endsWith(heading), `remember heading ${summary.remembered.heading}`);

  const found = await callOK(client, "memory_search", { query: marker, results: 3 });
  const hits = found.structuredContent.hits ?? [];
  check(hits.length >= 1 && hits[0].text.includes(marker), `search for the marker: ${JSON.stringify(hits)}`);
  summary.search = { mode: found.structuredContent.mode, hits: hits.length, top: hits[0].heading, id: hits[0].id };

  const wake = await callOK(client, "memory_wake_up", {});
  const wakeText = wake.content.find((c) => c.type === "text")?.text ?? "";
  check(wakeText.includes(marker), `wake-up lacks the new note: ${wakeText}`);
  summary.wakeUp = wakeText.split("\n")[0];

  const bad = await client.callTool({ name: "memory_search", arguments: { query: "x", results: 1000 } });
  check(bad.isError === true, `an out-of-range results was accepted: ${JSON.stringify(bad)}`);
  summary.badInput = bad.content[0]?.text ?? "";

  await client.close();
  console.log(JSON.stringify(summary));
}

main().catch((err) => fail(err?.stack ?? String(err)));
