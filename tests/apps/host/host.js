// A small MCP Apps host, as the ext-apps SDK's own example host (examples/basic-host) is one:
// the MCP TypeScript client connected to `mcpmount serve` (through drive.mjs's /mcp), the
// ext-apps AppBridge given that client, and the app's view in a sandboxed iframe. The bridge
// passes the view's own requests (its tools/call among them) to the client as they are.
//
// `window.host` says how far it got, for drive.mjs: "connecting", "rendered" or "failed".
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const HOST = { name: "mcpmount-test-host", version: "1.0.0" };

window.host = { phase: "connecting" };

async function render() {
  const client = new Client(HOST);
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));
  const { tools } = await client.listTools();
  // The agent's tools: a host leaves out those only an app may call.
  const agentTools = tools.filter((tool) => !isToolVisibilityAppOnly(tool));
  const tool = agentTools.find((candidate) => getToolUiResourceUri(candidate));
  if (!tool) {
    throw new Error(`no tool names a view: ${tools.map((t) => t.name).join(", ")}`);
  }
  const uri = getToolUiResourceUri(tool); // throws unless it is a ui:// URI
  const read = await client.readResource({ uri });
  const content = read.contents[0];
  if (content.mimeType !== RESOURCE_MIME_TYPE) {
    throw new Error(`${uri} is ${content.mimeType}, not ${RESOURCE_MIME_TYPE}`);
  }
  const html = "blob" in content ? atob(content.blob) : content.text;

  const iframe = document.getElementById("app");
  const capabilities = client.getServerCapabilities();
  const bridge = new AppBridge(client, HOST, {
    openLinks: {},
    serverTools: capabilities?.tools,
    serverResources: capabilities?.resources,
  });
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
  await initialized;

  const input = {};
  bridge.sendToolInput({ arguments: input });
  const result = await client.callTool({ name: tool.name, arguments: input });
  await bridge.sendToolResult(result);
  window.host = {
    phase: "rendered",
    tool: tool.name,
    uri,
    contentUri: content.uri,
    listed: tools.map((t) => t.name),
  };
}

render().catch((error) => {
  window.host = { phase: "failed", error: String(error?.stack ?? error) };
});
