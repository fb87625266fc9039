// probe.mjs is an agent that tries every way out of its container and then the two ways
// it is given: the wall ({wall_url}) and the model proxy ({llm_url}). It prints one line,
// "PROBE " and a JSON object: each attempt's name, whether it succeeded, and the error
// code it failed with. tests/container/containment_test.go reads it.
//
//   node probe.mjs WALL_URL LLM_URL HOST_PORT ALIAS_PORT CANARY_PATH
import net from "node:net";
import fs from "node:fs";
import dns from "node:dns/promises";

const [wallURL, llmURL, hostPort, aliasPort, canary] = process.argv.slice(2);
const results = {};

async function attempt(name, fn) {
  try {
    const detail = await fn();
    results[name] = { ok: true, detail: String(detail).slice(0, 300) };
  } catch (e) {
    results[name] = { ok: false, code: e.code || e.cause?.code || "", detail: String(e.message).slice(0, 300) };
  }
}

// connect opens a TCP or unix connection and closes it; it fails with the socket's error.
function connect(opts) {
  return new Promise((resolve, reject) => {
    const s = net.connect(opts);
    const timer = setTimeout(() => { s.destroy(); const e = new Error("no answer in 20s"); e.code = "TIMEOUT"; reject(e); }, 20000);
    s.on("connect", () => { clearTimeout(timer); s.end(); resolve("connected"); });
    s.on("error", (e) => { clearTimeout(timer); reject(e); });
  });
}

// (a) an HTTP server on the host's loopback
await attempt("host_loopback_http", () => connect({ host: "127.0.0.1", port: Number(hostPort) }));
// (b) a file outside the sandbox: the host's canary, and writes beside the sandbox
await attempt("host_file_read", () => fs.readFileSync(canary, "utf8"));
await attempt("write_root", () => fs.writeFileSync("/escaped", "x"));
await attempt("write_usr", () => fs.writeFileSync("/usr/escaped", "x"));
await attempt("read_host_passwd_shadow", () => fs.readFileSync("/etc/shadow", "utf8"));
// (c) the Docker socket
await attempt("docker_socket", () => connect({ path: "/var/run/docker.sock" }));
await attempt("docker_socket_run", () => connect({ path: "/run/docker.sock" }));
// (d) other addresses: a loopback alias the host listens on, addresses off the host, a name
await attempt("loopback_alias", () => connect({ host: "127.0.0.2", port: Number(aliasPort) }));
await attempt("private_address", () => connect({ host: "10.255.255.1", port: 80 }));
await attempt("public_address", () => connect({ host: "1.1.1.1", port: 443 }));
await attempt("public_ipv6", () => connect({ host: "2606:4700:4700::1111", port: 443 }));
await attempt("dns", () => dns.lookup("example.com"));

// The ways it is given.
await attempt("wall", async () => {
  const r = await fetch(wallURL + "/tools/read_email", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
  const text = await r.text();
  if (r.status !== 200) throw Object.assign(new Error(`HTTP ${r.status}: ${text}`), { code: "HTTP" + r.status });
  return text;
});
await attempt("llm", async () => {
  const r = await fetch(llmURL + "/chat/completions", {
    method: "POST", headers: { "Content-Type": "application/json", Authorization: "Bearer sk-test" },
    body: JSON.stringify({ model: "standin", messages: [{ role: "user", content: "Read the email." }] }),
  });
  const text = await r.text();
  if (r.status !== 200) throw Object.assign(new Error(`HTTP ${r.status}: ${text}`), { code: "HTTP" + r.status });
  return text;
});
await attempt("whoami", () => `uid ${process.getuid()} gid ${process.getgid()} pid1 ${fs.readFileSync("/proc/1/cmdline", "utf8").split("\0").slice(0, 2).join(" ")} cwd ${process.cwd()}`);

console.log("PROBE " + JSON.stringify(results));
console.log("Done.");
