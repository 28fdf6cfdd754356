// A hello endpoint for stackbench: it answers GET /hello with "Hello World" on HOST:PORT,
// which stackbench sets (docs/contracts.md sections 1 and 3).
"use strict";
const http = require("http");

const server = http.createServer((req, res) => {
  if (req.url === "/hello") {
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.end("Hello World");
    return;
  }
  res.writeHead(404, { "Content-Type": "text/plain" });
  res.end("not found");
});
server.listen(Number(process.env.PORT), process.env.HOST);
