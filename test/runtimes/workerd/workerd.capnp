# The suite's Workers on Redis, as one workerd process serves them: the fetch and Hono fixtures and the
# Hono example, bundled beside this file, each on a socket of its own (port 0: workerd picks free ones).
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "fetch", worker = .fetchWorker),
    (name = "hono", worker = .honoWorker),
    (name = "example", worker = .exampleWorker),
    # Where a Worker's sockets go. workerd allows public addresses only by default, as Cloudflare
    # does; the suite's Redis is on loopback. Its TLS Redis has a certificate of the suite's own CA,
    # which the suite writes beside this file.
    (
      name = "internet",
      network = (allow = ["public", "private"], tlsOptions = (trustedCertificates = [embed "ca.pem"])),
    ),
  ],
  sockets = [
    (name = "fetch", address = "127.0.0.1:0", http = (), service = "fetch"),
    (name = "hono", address = "127.0.0.1:0", http = (), service = "hono"),
    (name = "example", address = "127.0.0.1:0", http = (), service = "example"),
  ],
);

const fetchWorker :Workerd.Worker = (
  modules = [(name = "fetch-worker.js", esModule = embed "fetch-worker.js")],
  compatibilityDate = "2026-11-23",
  bindings = [
    (name = "REDIS_URL", fromEnvironment = "REDIS_URL"),
    (name = "REDIS_TLS_URL", fromEnvironment = "REDIS_TLS_URL"),
  ],
);

const honoWorker :Workerd.Worker = (
  modules = [(name = "hono-worker.js", esModule = embed "hono-worker.js")],
  compatibilityDate = "2026-11-23",
  bindings = [(name = "REDIS_URL", fromEnvironment = "REDIS_URL")],
);

const exampleWorker :Workerd.Worker = (
  modules = [(name = "example.js", esModule = embed "example.js")],
  compatibilityDate = "2026-11-23",
  bindings = [(name = "REDIS_URL", fromEnvironment = "REDIS_URL")],
);
