#!/usr/bin/env node
// A stdio MCP server of Node alone: read(path) and write(path), each answer "ok: ..." or
// "failed: ...". The sandbox tests run it through npx, as users run servers; it speaks the
// handshake era (initialize) and answers any other request with "method not found".
"use strict";
const fs = require("fs");
const readline = require("readline");

const tools = {
  read: (path) => "ok: " + fs.readFileSync(path, "utf8"),
  write: (path) => (fs.writeFileSync(path, "written"), "ok: written"),
};

function answer(method, params) {
  if (method === "initialize") {
    return {
      protocolVersion: params.protocolVersion || "2025-06-18",
      capabilities: { tools: {} },
      serverInfo: { name: "mcpmount-probe", version: "1.0.0" },
    };
  }
  if (method === "tools/list") {
    const inputSchema = { type: "object", properties: { path: { type: "string" } } };
    return { tools: Object.keys(tools).map((name) => ({ name, inputSchema })) };
  }
  if (method === "tools/call") {
    let text;
    try {
      text = tools[params.name](String((params.arguments || {}).path || ""));
    } catch (error) {
      text = "failed: " + error.code + ": " + error.message;
    }
    return { content: [{ type: "text", text }], isError: false };
  }
  if (method === "ping") return {};
  return null;
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined || message.method === undefined) return;
  const result = answer(message.method, message.params || {});
  const reply = result === null
    ? { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "method not found" } }
    : { jsonrpc: "2.0", id: message.id, result };
  process.stdout.write(JSON.stringify(reply) + "\n");
});
