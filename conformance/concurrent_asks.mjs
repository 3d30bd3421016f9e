// A server that asks its client on the standalone stream, as the conformance suite's
// reference server does for sampling and elicitation (`server.request(...)` with no
// related request): conformance/run.py's "+concurrent-asks" scenario.
//
// Its one tool, `ask(label)`, waits (at most 10 s) until two calls of it are in flight,
// asks "question for <label>" with `elicitInput` outside any request, waits (at most
// 10 s) until both have their answers, and returns its own answer: so two clients' calls
// overlap throughout, and each must get the question that names its own label.
//
// Streamable HTTP on 127.0.0.1, on a port the OS picks, written to the file named by its
// first argument once it listens; a session (and its own McpServer) per client.
//
//     node concurrent_asks.mjs PORTFILE

import { randomUUID } from "node:crypto";
import { renameSync, writeFileSync } from "node:fs";
import http from "node:http";

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const TOGETHER = 2;
const WAIT_MS = 10_000;
let asking = 0;
let answered = 0;

async function until(condition) {
  const deadline = Date.now() + WAIT_MS;
  while (!condition() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function newServer() {
  const server = new McpServer({ name: "concurrent-asks", version: "1.0.0" });
  server.registerTool(
    "ask",
    {
      description: "Ask the client a question naming label, on the standalone stream.",
      inputSchema: { label: z.string() },
    },
    async ({ label }) => {
      asking += 1;
      try {
        await until(() => asking >= TOGETHER);
        const result = await server.server.elicitInput({
          message: `question for ${label}`,
          requestedSchema: { type: "object", properties: { answer: { type: "string" } } },
        });
        answered += 1;
        await until(() => answered % TOGETHER === 0);
        const text =
          result.action === "accept" ? String(result.content?.answer) : `no answer (${result.action})`;
        return { content: [{ type: "text", text }] };
      } finally {
        asking -= 1;
      }
    },
  );
  return server;
}

const transports = new Map();

const httpServer = http.createServer(async (req, res) => {
  const sessionId = req.headers["mcp-session-id"];
  let transport = sessionId === undefined ? undefined : transports.get(sessionId);
  if (transport === undefined) {
    if (sessionId !== undefined) {
      res.writeHead(404).end();
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    transport.onclose = () => transports.delete(transport.sessionId);
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res);
});

httpServer.listen(0, "127.0.0.1", () => {
  const portfile = process.argv[2];
  writeFileSync(`${portfile}.partial`, String(httpServer.address().port));
  renameSync(`${portfile}.partial`, portfile);
});

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => process.exit(0));
}
