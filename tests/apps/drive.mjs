// Render an MCP App through `mcpmount serve` in a real headless chromium, and use it.
//
//   node drive.mjs SERVE_URL PROFILE_DIR
//
// Serves tests/apps/host/ (the host page) and tests/apps/node_modules/ (the ES modules it
// imports) on 127.0.0.1 with an OS-chosen port, and passes /mcp on to SERVE_URL, so the page
// reaches serve from its own origin and every JSON-RPC request it sends is seen here. Then it
// starts Debian's chromium through playwright-core with a fresh profile in PROFILE_DIR, opens
// the host page, waits until the view is rendered, clicks the view's "Get Server Time" button
// (server-basic-vanillajs's view calls its server's `get-time` tool) and waits for the view to
// show the answer. It prints one JSON report on stdout: what the host said (`host`), the
// view's text before and after the click, and the requests the page sent meanwhile.
// Every wait is bounded by TIMEOUT_MS; the whole run by TOTAL_MS.
import { readFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { chromium } from "playwright-core";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOTS = { "/host/": path.join(HERE, "host"), "/modules/": path.join(HERE, "node_modules") };
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript" };
const TIMEOUT_MS = 30_000;
const TOTAL_MS = 120_000;
// Without the background-networking flags chromium keeps dialling Google's services, refused.
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const [serveUrl, profile] = process.argv.slice(2);
const sent = []; // each JSON-RPC request the page sent to serve: {method, name?, uri?}

function note(body) {
  let parsed;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    return; // a GET or DELETE has no body
  }
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    if (message?.method !== undefined && message.id !== undefined) {
      const { name, uri } = message.params ?? {};
      sent.push({ method: message.method, name, uri });
    }
  }
}

function serveFile(request, response) {
  const url = new URL(request.url, "http://127.0.0.1");
  const prefix = Object.keys(ROOTS).find((p) => url.pathname.startsWith(p));
  const root = ROOTS[prefix];
  const file = root && path.resolve(root, "." + url.pathname.slice(prefix.length - 1));
  if (!file || !file.startsWith(root + path.sep)) {
    response.writeHead(404).end();
    return;
  }
  readFile(file).then(
    (body) => {
      const type = TYPES[path.extname(file)] ?? "application/octet-stream";
      response.writeHead(200, { "content-type": type }).end(body);
    },
    () => response.writeHead(404).end(),
  );
}

function passOn(request, response) {
  const target = new URL(serveUrl);
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => note(Buffer.concat(chunks)));
  const headers = { ...request.headers, host: target.host };
  const upstream = http.request(target, { method: request.method, headers }, (answer) => {
    response.writeHead(answer.statusCode, answer.headers);
    answer.pipe(response);
  });
  upstream.on("error", (error) => response.writeHead(502).end(String(error)));
  request.pipe(upstream);
}

const server = http.createServer((request, response) =>
  request.url === "/mcp" ? passOn(request, response) : serveFile(request, response),
);
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

const report = { host: null, before: null, after: null, sentByApp: [], console: [] };
const watchdog = setTimeout(() => {
  report.host = { phase: "failed", error: `drive.mjs gave up after ${TOTAL_MS} ms` };
  process.stdout.write(JSON.stringify(report) + "\n");
  process.exit(3); // playwright kills the browser it started on exit
}, TOTAL_MS);

const context = await chromium.launchPersistentContext(profile, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: FLAGS,
  timeout: TIMEOUT_MS,
});
try {
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(TIMEOUT_MS);
  page.on("console", (message) => report.console.push(`${message.type()}: ${message.text()}`));
  page.on("pageerror", (error) => report.console.push(`pageerror: ${error}`));
  await page.goto(`${origin}/host/index.html`);
  await page.waitForFunction(() => window.host.phase !== "connecting");
  report.host = await page.evaluate(() => window.host);
  if (report.host.phase === "rendered") {
    const view = await (await page.$("#app")).contentFrame();
    const shown = () => view.evaluate(() => document.getElementById("server-time").textContent);
    // The tool result the host sent is shown first; then the view's own call answers.
    await view.waitForFunction(
      () => document.getElementById("server-time")?.textContent !== "Loading...",
    );
    report.before = await shown();
    const already = sent.length;
    await view.click("#get-time-btn");
    await view.waitForFunction(
      (before) => document.getElementById("server-time").textContent !== before,
      report.before,
    );
    report.after = await shown();
    report.sentByApp = sent.slice(already);
  }
} catch (error) {
  report.host = { ...report.host, phase: "failed", error: String(error?.stack ?? error) };
} finally {
  await context.close();
  clearTimeout(watchdog);
}
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(0); // without waiting for the page's open streams to serve to end
