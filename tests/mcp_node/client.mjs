// An MCP client nobody here wrote: the official TypeScript SDK's Client over stdio, driving
// `deepsift mcp` as an assistant would. Reads a plan (JSON file, argv[2]), prints what each
// call returned as one JSON object. tests/test_mcp_node.py checks it.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const transport = new StdioClientTransport({
  command: plan.command,
  args: plan.args,
  env: plan.env,
  cwd: plan.cwd,
  stderr: "pipe",
});
let serverLog = "";
transport.stderr.on("data", (data) => (serverLog += data));

const client = new Client({ name: "deepsift-node-test", version: "1.0.0" }, { capabilities: { roots: {} } });
// The folder the user shares with the server: the only one its ingest may read.
client.setRequestHandler(ListRootsRequestSchema, async () => ({
  roots: [{ uri: pathToFileURL(plan.root).href, name: "shared notes" }],
}));
await client.connect(transport);

async function call(name, args, options = {}) {
  const progress = [];
  try {
    const result = await client.callTool({ name, arguments: args }, undefined, {
      timeout: 120_000,
      resetTimeoutOnProgress: true,
      onprogress: (p) => progress.push(p.message ?? ""),
      ...options,
    });
    return {
      isError: Boolean(result.isError),
      text: result.content?.[0]?.text ?? "",
      structured: result.structuredContent ?? null,
      progress,
    };
  } catch (error) {
    return { thrown: String(error?.message ?? error), progress };
  }
}

const seen = { tools: (await client.listTools()).tools.map((tool) => tool.name).sort() };
seen.ingest = await call("ingest", { paths: [plan.root], collection: "notes", description: "notes on Lake Veldmere" });
seen.collections = await call("list_collections", {});
seen.research = await call("research", { question: plan.question, sources: ["notes"], length: "brief" });
const threadId = seen.research.structured?.thread_id;
seen.reread = threadId ? await call("get_report", { thread_id: threadId }) : null;
// A follow-up to the finished run, then the run again: the exchange is listed with it.
seen.ask = threadId ? await call("ask", { thread_id: threadId, question: plan.followUp }) : null;
seen.listed = threadId ? await call("get_report", { thread_id: threadId }) : null;
seen.outside = await call("ingest", { paths: [plan.outside], collection: "notes" });
seen.bad = [];
for (const [name, args] of plan.bad) seen.bad.push({ name, args, ...(await call(name, args)) });
await client.close();
seen.serverLog = serverLog;
console.log(JSON.stringify(seen));
