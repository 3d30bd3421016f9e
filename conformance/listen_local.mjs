// Preloaded into server-everything (node --import ./listen_local.mjs) by run.py: its
// streamable HTTP transport listens on process.env.PORT on every interface and never says
// which port it got. This makes the first listen() bind 127.0.0.1 on a port the OS picks
// and write that port to the file named by MCPMOUNT_PORTFILE once it is listening.
import { writeFileSync } from "node:fs";
import net from "node:net";

const portfile = process.env.MCPMOUNT_PORTFILE;
const listen = net.Server.prototype.listen;
let done = false;

net.Server.prototype.listen = function (...args) {
  if (done || !portfile) return listen.apply(this, args);
  done = true;
  const callback = typeof args.at(-1) === "function" ? args.at(-1) : undefined;
  this.once("listening", () => {
    writeFileSync(portfile, String(this.address().port));
  });
  return listen.call(this, { port: 0, host: "127.0.0.1" }, callback);
};
