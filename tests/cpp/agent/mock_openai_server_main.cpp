// mock_openai_server SCRIPT.json [--key KEY]
// Serves the scripted replies on 127.0.0.1 (a free port), prints "PORT\n" on stdout once it
// listens, and runs until SIGTERM or SIGINT. For Python and integration tests.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "mock_openai_server.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mock_openai_server SCRIPT.json [--key KEY]\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  auto script = ts::agent::testing::parse_script(text.str());
  if (!script) {
    std::fprintf(stderr, "mock_openai_server: %s: %s\n", argv[1], script.error().message.c_str());
    return 2;
  }
  std::string key = argc >= 4 && std::string(argv[2]) == "--key" ? argv[3] : "";
  sigset_t signals;  // blocked before the server's threads start, so only sigwait sees them
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ts::agent::testing::MockOpenAiServer server(0, key);
  if (!server.ok()) {
    std::fprintf(stderr, "mock_openai_server: cannot bind 127.0.0.1\n");
    return 1;
  }
  server.push(*script);
  std::printf("%d\n", server.port());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  server.stop();
  return 0;
}
