// A stand-in for cliproxyapi on loopback: `fake_cliproxyapi -config config.yaml`.
// Reads host, port, auth-dir and api-keys like the real one, refuses to start without a Codex
// login in auth-dir, then serves GET /v1/models and chat completions ("hello from the fake
// cliproxyapi") to clients that send one of the api-keys. Runs until SIGTERM.
// `-any-key` makes it answer every key, like an unrelated server that holds the port.
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <yaml-cpp/yaml.h>

#include "mock_openai_server.hpp"

int main(int argc, char** argv) {
  std::string config_path;
  bool any_key = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "-config" || arg == "--config") && i + 1 < argc) config_path = argv[i + 1];
    if (arg == "-any-key") any_key = true;
  }
  if (config_path.empty()) {
    std::fprintf(stderr, "fake_cliproxyapi: -config is required\n");
    return 2;
  }
  YAML::Node config;
  try {
    config = YAML::LoadFile(config_path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_cliproxyapi: %s\n", e.what());
    return 2;
  }
  if (config["host"].as<std::string>("") != "127.0.0.1") return 3;  // must stay on loopback
  int port = config["port"].as<int>(0);
  std::filesystem::path auth_dir = config["auth-dir"].as<std::string>("");
  std::string key = config["api-keys"] && config["api-keys"].size()
                        ? config["api-keys"][0].as<std::string>()
                        : "";
  bool login = false;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(auth_dir, ec))
    if (e.path().filename().string().find("codex") != std::string::npos) login = true;
  if (!login || key.empty() || port <= 0) return 4;

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ts::agent::testing::MockOpenAiServer server(port, any_key ? "" : key);
  if (!server.ok()) return 5;
  server.set_default_reply(ts::agent::testing::completion_reply("hello from the fake cliproxyapi"));
  int sig = 0;
  sigwait(&signals, &sig);
  server.stop();
  return 0;
}
