// The baseline: a bare node:http server that reads the request body and answers with fixed
// bytes (the exact status, headers and body flagserve gave for the same request).
import { createServer } from "node:http";

const { status, headers, body } = JSON.parse(process.argv[2]);
const payload = Buffer.from(body, "utf8");
const server = createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    res.writeHead(status, headers);
    res.end(status === 304 ? undefined : payload);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => console.log(`ready http://127.0.0.1:${server.address().port}`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
