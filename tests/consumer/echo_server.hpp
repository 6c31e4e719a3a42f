// tests/consumer/echo_server.hpp: the consumer's own echo server on readyport's engine, the code an
// embedder ships, and the subject of its test under the harness (echo_test.cpp) and of the
// tutorial (docs/testing-your-server.md, whose code blocks are this file's and echo_test.cpp's).
//
//   consumer::EchoServer server(os);       // any readyport::Os: WindowsOs, or the harness's
//   readyport::Status s = server.start();  // the engine, a listener on 127.0.0.1, two workers
//   ... clients connect to server.address() ...
//   s = server.stop();                     // stops the engine, joins every thread
//
// Built with CONSUMER_PLANTED_BUG defined, its handler closes its own socket instead of returning
// kInterestClose: the bug the consumer's planted test and the tutorial show the harness catching.
//
// Ownership: the server owns its engine, threads and connections (each connection's state is
// deleted in its on_closed). Threading: handlers on the workers; start and stop from one thread.
// Errors: Status values.
#pragma once

#include <cstdint>
#include <memory>

#include "readyport/engine.hpp"
#include "readyport/os.hpp"

namespace consumer {

class EchoServer {
 public:
  explicit EchoServer(readyport::Os& os, std::uint32_t workers = 2);
  ~EchoServer();
  EchoServer(const EchoServer&) = delete;
  EchoServer& operator=(const EchoServer&) = delete;

  readyport::Status start();
  readyport::Ipv4Address address() const;
  readyport::Status stop();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace consumer
