/**
 * HTTP/1.1 and cleartext HTTP/2 on one port (src/flagd/one-port.ts): each connection goes to the
 * server its first bytes name, however they arrive (all at once, or a byte at a time), and what
 * was read to tell is not lost.
 */
import { connect as connectHttp2 } from "node:http2";
import { connect as connectTcp, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HTTP2_PREFACE, listenOnePort, type OnePort } from "../../src/flagd/one-port.js";

let port: OnePort;

beforeAll(async () => {
  port = await listenOnePort(
    (req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (body += chunk));
      req.on("end", () => res.end(`HTTP/${req.httpVersion} ${req.method} ${req.url} ${body}`));
    },
    { host: "127.0.0.1", port: 0 },
  );
});

afterAll(async () => {
  await port?.close(100);
});

/** Writes `bytes` one at a time, each in its own segment, and resolves with all the socket answered. */
async function trickle(bytes: Buffer): Promise<string> {
  const socket: Socket = connectTcp(port.port, "127.0.0.1");
  socket.setNoDelay(true);
  await new Promise((resolve) => socket.once("connect", resolve));
  let answer = "";
  socket.setEncoding("latin1").on("data", (chunk: string) => (answer += chunk));
  const closed = new Promise((resolve) => socket.once("close", resolve));
  for (const byte of bytes) {
    socket.write(Buffer.from([byte]));
    await new Promise((resolve) => setImmediate(resolve));
  }
  await closed;
  return answer;
}

describe("one port, two protocols", () => {
  it("answers HTTP/1.1 and HTTP/2 (prior knowledge) alike", async () => {
    const http1 = await fetch(`http://127.0.0.1:${port.port}/one?x=1`, { method: "POST", body: "hello" });
    expect(await http1.text()).toBe("HTTP/1.1 POST /one?x=1 hello");

    const session = connectHttp2(`http://127.0.0.1:${port.port}`);
    const stream = session.request({ ":method": "POST", ":path": "/two" });
    stream.end("world");
    let text = "";
    stream.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    await new Promise((resolve) => stream.once("end", resolve));
    session.close();
    expect(text).toBe("HTTP/2.0 POST /two world");
  });

  it("keeps the bytes it read to tell: an HTTP/1.1 request sent a byte at a time", async () => {
    const answer = await trickle(
      Buffer.from("POST /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toMatch(/HTTP\/1\.1 POST \/slow abc$/);
  });

  it("tells HTTP/2 only from the whole preface: a request that starts like it is still HTTP/1.1", async () => {
    // "PRI " and more of the preface, then something else: an (invalid) HTTP/1.1 request, answered 400 by that server.
    const answer = await trickle(Buffer.concat([HTTP2_PREFACE.subarray(0, 10), Buffer.from("\r\n\r\n")]));
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request/);
  });

  it("hands a preface sent a byte at a time to the HTTP/2 server, which answers with its SETTINGS", async () => {
    const socket = connectTcp(port.port, "127.0.0.1");
    socket.setNoDelay(true);
    await new Promise((resolve) => socket.once("connect", resolve));
    const first = new Promise<Buffer>((resolve) => socket.once("data", resolve));
    for (const byte of HTTP2_PREFACE) {
      socket.write(Buffer.from([byte]));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const frame = await first;
    socket.destroy();
    // A frame header: 3 bytes of length, then type 4 (SETTINGS) on stream 0.
    expect(frame[3]).toBe(4);
    expect(frame.readUInt32BE(5) & 0x7fffffff).toBe(0);
  });
});
