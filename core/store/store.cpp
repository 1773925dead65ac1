// Run tracks and the artifact cache: see ts/store/store.hpp for the layout and guarantees.
#include "ts/store/store.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <ctime>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <openssl/evp.h>

#include <nlohmann/json.hpp>

namespace ts::store {
namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(int err) {
  return std::strerror(err);
}

tl::unexpected<Error> io_error(std::string_view what, const fs::path& path, int err) {
  return fail(err == ENOENT ? Errc::not_found : Errc::io,
              fmt::format("{} '{}': {}", what, path.string(), errno_text(err)));
}

std::string random_hex(std::size_t digits) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string out;
  while (out.size() < digits) out += fmt::format("{:016x}", rng());
  out.resize(digits);
  return out;
}

bool is_plain_name(std::string_view name) {
  if (name.empty() || name.size() > 200 || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

// Temp files are ".<name>.tmp-<pid>-<hex>": hidden, so no listing ever sees them.
bool is_temp_name(std::string_view name) {
  return !name.empty() && name[0] == '.' && name.find(".tmp-") != std::string_view::npos;
}

Expected<void> fsync_path(const fs::path& path, bool directory) {
  int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return io_error("open for fsync", path, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return io_error("fsync", path, err);
  return {};
}

Expected<void> write_all(int fd, std::string_view bytes, const fs::path& path) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error("write", path, errno);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

// Writes a new file (O_EXCL) completely and fsyncs it; no rename.
Expected<void> write_new_file_synced(const fs::path& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("create", path, errno);
  auto written = write_all(fd, bytes, path);
  if (written && ::fsync(fd) != 0) written = io_error("fsync", path, errno);
  ::close(fd);
  if (!written) ::unlink(path.c_str());
  return written;
}

Expected<void> ensure_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return fail(Errc::io, fmt::format("create directory '{}': {}", dir.string(), ec.message()));
  return {};
}

// Removes leftovers of interrupted writes. Call only under the lock that all writers of `dir`
// hold, so that no live write's temp file can be taken.
void remove_temp_files(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (is_temp_name(entry.path().filename().string())) fs::remove_all(entry.path(), ec);
  }
}

Expected<void> check_json(std::string_view text, std::string_view what) {
  if (!nlohmann::json::accept(text))
    return fail(Errc::parse, fmt::format("{}: not valid JSON", what));
  return {};
}

std::string attempt_name(int slot) {
  return fmt::format("attempt_{:02d}.py", slot);
}

// Manifest text: sorted "<sha256>  <name>\n" lines (the sha256sum format); its hash names the
// artifact.
std::string manifest_text(std::vector<std::pair<std::string, std::string>> name_and_hash) {
  std::sort(name_and_hash.begin(), name_and_hash.end());
  std::string text;
  for (const auto& [name, hash] : name_and_hash) text += hash + "  " + name + "\n";
  return text;
}

bool is_sha256_hex(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Files

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  TS_CHECK(ctx != nullptr, "EVP_MD_CTX_new failed");
  bool ok = EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1 &&
            EVP_DigestUpdate(ctx, bytes.data(), bytes.size()) == 1 &&
            EVP_DigestFinal_ex(ctx, digest.data(), &length) == 1;
  EVP_MD_CTX_free(ctx);
  TS_CHECK(ok && length == 32, "SHA-256 digest failed");
  std::string hex;
  hex.reserve(64);
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

Expected<void> write_file_atomic(const fs::path& path, std::string_view bytes) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const fs::path temp =
      dir / fmt::format(".{}.tmp-{}-{}", path.filename().string(), ::getpid(), random_hex(8));
  auto written = write_new_file_synced(temp, bytes);
  if (!written) return written;
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    return io_error("rename into", path, err);
  }
  return fsync_path(dir, true);
}

Expected<std::string> read_file(const fs::path& path) {
  // O_NONBLOCK: opening a FIFO put where a file was expected returns at once instead of waiting
  // for a writer; only a regular file is then read.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return io_error("open", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(Errc::io, fmt::format("read '{}': not a regular file", path.string()));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      int err = errno;
      ::close(fd);
      return io_error("read", path, err);
    }
  }
  ::close(fd);
  return out;
}

// ---------------------------------------------------------------------------------------------
// FileLock

Expected<FileLock> FileLock::try_acquire(const fs::path& path, Mode mode) {
  return acquire(path, mode, 0);
}

Expected<FileLock> FileLock::acquire(const fs::path& path, Mode mode, double timeout_s) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("open lock", path, errno);
  const int op = mode == Mode::exclusive ? LOCK_EX : LOCK_SH;
  if (timeout_s < 0) {
    while (::flock(fd, op) != 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return io_error("flock", path, err);
    }
    return FileLock(fd);
  }
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  auto backoff = std::chrono::microseconds(200);
  for (;;) {
    if (::flock(fd, op | LOCK_NB) == 0) return FileLock(fd);
    int err = errno;
    if (err != EWOULDBLOCK && err != EINTR) {
      ::close(fd);
      return io_error("flock", path, err);
    }
    if (Clock::now() >= deadline) {
      ::close(fd);
      return fail(Errc::unavailable,
                  fmt::format("lock '{}' is held by another writer", path.string()));
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::microseconds(20'000));
  }
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}
FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

// ---------------------------------------------------------------------------------------------
// Names

Expected<fs::path> cache_root(const std::map<std::string, std::string>& env) {
  if (auto it = env.find("TILESMITH_CACHE_DIR"); it != env.end() && !it->second.empty())
    return fs::path(it->second);
  if (auto it = env.find("HOME"); it != env.end() && !it->second.empty())
    return fs::path(it->second) / ".cache" / "tilesmith";
  return fail(Errc::not_found, "cache root: neither TILESMITH_CACHE_DIR nor HOME is set");
}

std::string new_run_id() {
  auto now = std::chrono::system_clock::now();
  auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(micros / 1'000'000);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &utc);
  return fmt::format("{}.{:06d}Z-{}-{}", stamp, micros % 1'000'000, ::getpid(), random_hex(8));
}

bool is_valid_run_id(std::string_view id) {
  return id.size() <= 128 && is_plain_name(id);
}

bool is_valid_cache_key(std::string_view key) {
  return is_sha256_hex(key);
}

// ---------------------------------------------------------------------------------------------
// Track

namespace {

// The run's directory with its marker, created if missing.
Expected<fs::path> ensure_run(const fs::path& root, std::string_view run_id) {
  if (!is_valid_run_id(run_id))
    return fail(Errc::invalid_argument, fmt::format("run: bad run id '{}'", run_id));
  fs::path dir = root / "runs" / std::string(run_id);
  if (auto made = ensure_dir(dir); !made) return tl::unexpected(made.error());
  const fs::path marker = dir / run_marker_name;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(marker, ec))) {
    auto text = nlohmann::json{{"run_id", run_id}, {"tool", "tilesmith"}}.dump() + "\n";
    if (auto w = write_file_atomic(marker, text); !w) return tl::unexpected(w.error());
  }
  return dir;
}

}  // namespace

Expected<RunLease> RunLease::hold(const fs::path& root, std::string_view run_id) {
  auto dir = ensure_run(root, run_id);
  if (!dir) return tl::unexpected(dir.error());
  auto lock = FileLock::acquire(*dir / run_marker_name, FileLock::Mode::shared, 10.0);
  if (!lock) return tl::unexpected(lock.error());
  return RunLease(*dir, std::move(*lock));
}

Expected<Track> Track::open(const fs::path& root, std::string_view run_id,
                            std::string_view cache_key) {
  if (!is_valid_run_id(run_id))
    return fail(Errc::invalid_argument, fmt::format("track: bad run id '{}'", run_id));
  if (!is_valid_cache_key(cache_key))
    return fail(Errc::invalid_argument,
                fmt::format("track: cache key '{}' is not 64 lower-case hex digits", cache_key));
  auto run_dir = ensure_run(root, run_id);
  if (!run_dir) return tl::unexpected(run_dir.error());
  fs::path dir = *run_dir / std::string(cache_key);
  for (const char* sub : {"attempts", "profiles", "traces"})
    if (auto made = ensure_dir(dir / sub); !made) return tl::unexpected(made.error());
  return Track(std::move(dir), std::string(run_id), std::string(cache_key));
}

Expected<fs::path> Track::write_attempt(std::string_view text) const {
  auto lock = FileLock::acquire(dir_ / ".lock");
  if (!lock) return tl::unexpected(lock.error());
  const fs::path attempts_dir = dir_ / "attempts";
  remove_temp_files(attempts_dir);

  // Compact first: a crash in the middle of an earlier shift can leave a hole (01 renamed onto
  // 00, 02 not yet onto 01). Renaming the survivors down in order restores 00..m-1.
  int used = 0;
  for (int slot = 0; slot < attempt_slots; ++slot) {
    fs::path from = attempts_dir / attempt_name(slot);
    if (!fs::exists(from)) continue;
    if (slot != used && ::rename(from.c_str(), (attempts_dir / attempt_name(used)).c_str()) != 0)
      return io_error("rename attempt", from, errno);
    ++used;
  }
  if (used == attempt_slots) {
    // rename(01 -> 00) atomically replaces the oldest; then 02 -> 01, ...; slot 04 is then free.
    for (int slot = 1; slot < attempt_slots; ++slot) {
      fs::path from = attempts_dir / attempt_name(slot);
      if (::rename(from.c_str(), (attempts_dir / attempt_name(slot - 1)).c_str()) != 0)
        return io_error("rename attempt", from, errno);
    }
    used = attempt_slots - 1;
  }
  fs::path target = attempts_dir / attempt_name(used);
  if (auto written = write_file_atomic(target, text); !written)
    return tl::unexpected(written.error());
  return target;
}

Expected<std::vector<std::string>> Track::attempts() const {
  auto lock = FileLock::acquire(dir_ / ".lock", FileLock::Mode::shared);
  if (!lock) return tl::unexpected(lock.error());
  std::vector<std::string> out;
  for (int slot = 0; slot < attempt_slots; ++slot) {
    auto text = read_file(dir_ / "attempts" / attempt_name(slot));
    if (text)
      out.push_back(std::move(*text));
    else if (text.error().code != Errc::not_found)
      return tl::unexpected(text.error());
  }
  return out;
}

Expected<std::string> Track::latest_attempt() const {
  auto all = attempts();
  if (!all) return tl::unexpected(all.error());
  if (all->empty())
    return fail(Errc::not_found, fmt::format("track {}: no attempts yet", dir_.string()));
  return std::move(all->back());
}

Expected<fs::path> Track::write_profile(std::string_view name, std::string_view json_text) const {
  if (!is_plain_name(name))
    return fail(Errc::invalid_argument, fmt::format("profile name '{}' is not a plain name", name));
  if (auto ok = check_json(json_text, fmt::format("profile '{}'", name)); !ok)
    return tl::unexpected(ok.error());
  fs::path path = dir_ / "profiles" / (std::string(name) + ".json");
  if (auto written = write_file_atomic(path, json_text); !written)
    return tl::unexpected(written.error());
  return path;
}

Expected<void> Track::append_trace_line(std::string_view json_line) const {
  if (json_line.find('\n') != std::string_view::npos)
    return fail(Errc::invalid_argument, "trace line contains a newline");
  if (auto ok = check_json(json_line, "trace line"); !ok) return ok;
  auto lock = FileLock::acquire(dir_ / ".lock");
  if (!lock) return tl::unexpected(lock.error());
  // One write() of the whole line with O_APPEND: a crash can only cut the last line short, and
  // readers drop a last line without '\n'.
  fs::path path = dir_ / "traces" / "trace.jsonl";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("open", path, errno);
  std::string line = std::string(json_line) + "\n";
  auto written = write_all(fd, line, path);
  if (written && ::fsync(fd) != 0) written = io_error("fsync", path, errno);
  ::close(fd);
  return written;
}

Expected<void> Track::write_cache_hit(std::string_view json_text) const {
  if (auto ok = check_json(json_text, "cache.json"); !ok) return ok;
  return write_file_atomic(dir_ / "cache.json", json_text);
}

// ---------------------------------------------------------------------------------------------
// ArtifactCache

Expected<std::string> ArtifactCache::put(const std::vector<ArtifactFile>& files) const {
  if (files.empty()) return fail(Errc::invalid_argument, "artifact: no files");
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& f : files) {
    if (!is_plain_name(f.name) || f.name == "manifest.json")
      return fail(Errc::invalid_argument, fmt::format("artifact: bad file name '{}'", f.name));
    entries.emplace_back(f.name, sha256_hex(f.bytes));
  }
  std::sort(entries.begin(), entries.end());
  for (std::size_t i = 1; i < entries.size(); ++i)
    if (entries[i].first == entries[i - 1].first)
      return fail(Errc::invalid_argument,
                  fmt::format("artifact: file name '{}' given twice", entries[i].first));
  const std::string manifest = manifest_text(entries);
  const std::string hash = sha256_hex(manifest);

  if (auto made = ensure_dir(dir_); !made) return tl::unexpected(made.error());
  const fs::path final_dir = dir_ / hash;
  if (get(hash)) return hash;  // already stored and intact

  const fs::path temp_dir = dir_ / fmt::format(".{}.tmp-{}-{}", hash, ::getpid(), random_hex(8));
  std::error_code ec;
  fs::create_directory(temp_dir, ec);
  if (ec)
    return fail(Errc::io, fmt::format("artifact: mkdir '{}': {}", temp_dir.string(), ec.message()));
  auto fill = [&]() -> Expected<void> {
    for (const auto& f : files)
      if (auto w = write_new_file_synced(temp_dir / f.name, f.bytes); !w) return w;
    if (auto w = write_new_file_synced(temp_dir / "manifest.json", manifest); !w) return w;
    return fsync_path(temp_dir, true);
  };
  if (auto filled = fill(); !filled) {
    fs::remove_all(temp_dir, ec);
    return tl::unexpected(filled.error());
  }
  // Publishing is serialized: otherwise one writer could move aside, as "corrupt", the entry
  // another writer of the same content has just published while a third is verifying it.
  auto publish_lock = FileLock::acquire(dir_ / ".publish.lock");
  if (!publish_lock) {
    fs::remove_all(temp_dir, ec);
    return tl::unexpected(publish_lock.error());
  }
  if (fs::exists(final_dir) && get(hash)) {  // the same content is already stored and verifies
    fs::remove_all(temp_dir, ec);
    return hash;
  }
  // A corrupt entry under the final name is moved aside first (rename cannot replace a
  // non-empty directory), then removed.
  if (fs::exists(final_dir)) {
    fs::path trash = dir_ / fmt::format(".{}.tmp-corrupt-{}", hash, random_hex(8));
    if (::rename(final_dir.c_str(), trash.c_str()) == 0) fs::remove_all(trash, ec);
  }
  if (::rename(temp_dir.c_str(), final_dir.c_str()) != 0) {
    int err = errno;
    fs::remove_all(temp_dir, ec);
    // A concurrent put of the same content won the race: fine if what it stored verifies.
    if ((err == EEXIST || err == ENOTEMPTY) && get(hash)) return hash;
    return io_error("artifact: rename into", final_dir, err);
  }
  if (auto synced = fsync_path(dir_, true); !synced) return tl::unexpected(synced.error());
  return hash;
}

Expected<std::vector<ArtifactFile>> ArtifactCache::get(std::string_view hash) const {
  if (!is_sha256_hex(hash))
    return fail(Errc::invalid_argument, fmt::format("artifact: bad hash '{}'", hash));
  const fs::path entry = dir_ / std::string(hash);
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(entry, ec)))
    return fail(Errc::not_found, fmt::format("artifact {} is not in the cache", hash));
  auto manifest = read_file(entry / "manifest.json");
  if (!manifest)
    return fail(Errc::io,
                fmt::format("artifact {} is corrupt: {}", hash, manifest.error().message));
  if (sha256_hex(*manifest) != hash)
    return fail(Errc::io, fmt::format("artifact {} is corrupt: manifest hash mismatch", hash));

  std::vector<ArtifactFile> files;
  std::string_view rest = *manifest;
  while (!rest.empty()) {
    auto nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    if (line.size() < 67 || line.substr(64, 2) != "  " || !is_sha256_hex(line.substr(0, 64)) ||
        !is_plain_name(line.substr(66)))
      return fail(Errc::io, fmt::format("artifact {} is corrupt: bad manifest line", hash));
    std::string name(line.substr(66));
    auto bytes = read_file(entry / name);
    if (!bytes)
      return fail(Errc::io, fmt::format("artifact {} is corrupt: {}", hash, bytes.error().message));
    if (sha256_hex(*bytes) != line.substr(0, 64))
      return fail(Errc::io,
                  fmt::format("artifact {} is corrupt: '{}' does not match its hash", hash, name));
    files.push_back({std::move(name), std::move(*bytes)});
  }
  if (files.empty()) return fail(Errc::io, fmt::format("artifact {} is corrupt: empty", hash));
  return files;
}

Expected<void> ArtifactCache::set_index(std::string_view cache_key, std::string_view hash) const {
  if (!is_valid_cache_key(cache_key))
    return fail(Errc::invalid_argument,
                fmt::format("artifact index: bad cache key '{}'", cache_key));
  if (auto artifact = get(hash); !artifact) return tl::unexpected(artifact.error());
  const fs::path index_dir = dir_ / "index";
  if (auto made = ensure_dir(index_dir); !made) return made;
  // Each key is its own file, so a rename makes each update atomic; the lock orders concurrent
  // writers of the index (last writer wins, never a torn entry) and guards the temp cleanup.
  auto lock = FileLock::acquire(dir_ / ".index.lock");
  if (!lock) return tl::unexpected(lock.error());
  remove_temp_files(index_dir);
  return write_file_atomic(index_dir / std::string(cache_key), std::string(hash) + "\n");
}

namespace {

// The artifact hash an index entry names ("<sha256>\n"), if it is one.
std::optional<std::string> index_entry_hash(std::string_view text) {
  std::string hash(text.substr(0, text.find('\n')));
  if (!is_sha256_hex(hash)) return std::nullopt;
  return hash;
}

}  // namespace

Expected<fs::path> ArtifactCache::quarantine(std::string_view cache_key,
                                             std::string_view why) const {
  if (!is_valid_cache_key(cache_key))
    return fail(Errc::invalid_argument,
                fmt::format("artifact index: bad cache key '{}'", cache_key));
  auto lock = FileLock::acquire(dir_ / ".index.lock");
  if (!lock) return tl::unexpected(lock.error());
  const fs::path entry = dir_ / "index" / std::string(cache_key);
  // The artifact it names, when the entry is readable and names one: it goes aside too.
  std::optional<std::string> hash;
  if (auto text = read_file(entry); text) hash = index_entry_hash(*text);
  const fs::path aside = dir_ / "quarantine" / fmt::format("{}-{}", cache_key, random_hex(8));
  if (auto made = ensure_dir(aside); !made) return tl::unexpected(made.error());
  std::error_code ec;
  if (fs::exists(fs::symlink_status(entry, ec)) &&
      ::rename(entry.c_str(), (aside / "index-entry").c_str()) != 0)
    return io_error("quarantine: rename", entry, errno);
  if (hash && fs::is_directory(fs::symlink_status(dir_ / *hash, ec)) &&
      ::rename((dir_ / *hash).c_str(), (aside / *hash).c_str()) != 0)
    return io_error("quarantine: rename", dir_ / *hash, errno);
  if (auto w = write_file_atomic(aside / "why.txt", std::string(why) + "\n"); !w)
    return tl::unexpected(w.error());
  return aside;
}

Expected<std::string> ArtifactCache::lookup(std::string_view cache_key) const {
  if (!is_valid_cache_key(cache_key))
    return fail(Errc::invalid_argument,
                fmt::format("artifact index: bad cache key '{}'", cache_key));
  auto text = read_file(dir_ / "index" / std::string(cache_key));
  if (!text) {
    if (text.error().code == Errc::not_found)
      return fail(Errc::not_found, fmt::format("no artifact for cache key {}", cache_key));
    return tl::unexpected(text.error());
  }
  auto hash = index_entry_hash(*text);
  if (!hash)
    return fail(Errc::io, fmt::format("artifact index entry for {} is corrupt", cache_key));
  return *hash;
}

// ---------------------------------------------------------------------------------------------
// Listing and cleaning

namespace {

std::int64_t mtime_unix_s(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return static_cast<std::int64_t>(st.st_mtim.tv_sec);
}

std::vector<std::string> sorted_entries(const fs::path& dir, bool directories_only) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (directories_only && !entry.is_directory(ec)) continue;
    if (directories_only && entry.is_symlink(ec)) continue;
    names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

Expected<std::vector<RunInfo>> list_runs(const fs::path& root) {
  std::vector<RunInfo> runs;
  const fs::path runs_dir = root / "runs";
  std::error_code ec;
  if (!fs::is_directory(runs_dir, ec)) return runs;
  for (const auto& id : sorted_entries(runs_dir, true)) {
    RunInfo info;
    info.run_id = id;
    info.modified_unix_s = mtime_unix_s(runs_dir / id);
    for (const auto& key : sorted_entries(runs_dir / id, true))
      info.tracks += is_valid_cache_key(key);
    runs.push_back(std::move(info));
  }
  return runs;
}

Expected<std::vector<std::string>> list_tracks(const fs::path& root, std::string_view run_id) {
  if (!is_valid_run_id(run_id))
    return fail(Errc::invalid_argument, fmt::format("bad run id '{}'", run_id));
  const fs::path run_dir = root / "runs" / std::string(run_id);
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(run_dir, ec)))
    return fail(Errc::not_found, fmt::format("run '{}' not found under {}", run_id, root.string()));
  std::vector<std::string> keys;
  for (auto& key : sorted_entries(run_dir, true))
    if (is_valid_cache_key(key)) keys.push_back(std::move(key));
  return keys;
}

Expected<CleanReport> clean_runs(const fs::path& root, std::optional<double> older_than_days,
                                 bool dry_run) {
  if (older_than_days && !(*older_than_days >= 0))
    return fail(Errc::invalid_argument, "clean: older_than_days must be >= 0");
  CleanReport report;
  const fs::path runs_dir = root / "runs";
  std::error_code ec;
  const auto runs_status = fs::symlink_status(runs_dir, ec);
  if (fs::is_symlink(runs_status))
    return fail(
        Errc::invalid_argument,
        fmt::format("clean: '{}' is a symbolic link; clean follows no links", runs_dir.string()));
  if (!fs::is_directory(runs_status)) return report;
  const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  auto not_ours = [&](const std::string& name, const char* why) {
    report.not_ours.push_back(fmt::format("{}: {}", name, why));
  };
  for (const auto& entry : fs::directory_iterator(runs_dir, ec)) {
    const fs::path path = entry.path();
    const std::string name = path.filename().string();
    if (is_temp_name(name)) continue;  // an interrupted clean's leftover: handled below
    if (entry.is_symlink(ec)) {
      not_ours(name, "a symbolic link");
      continue;
    }
    if (!entry.is_directory(ec)) continue;
    if (!is_valid_run_id(name)) {
      not_ours(name, "not named like a run");
      continue;
    }
    const fs::path marker = path / run_marker_name;
    if (!fs::is_regular_file(fs::symlink_status(marker, ec))) {
      not_ours(name, "no Tilesmith run marker");
      continue;
    }
    if (older_than_days &&
        static_cast<double>(now_s - mtime_unix_s(path)) < *older_than_days * 86400.0)
      continue;
    // Hold the run's marker and every track lock while deleting, so that a live run is never
    // pulled from under its process.
    std::vector<FileLock> held;
    auto run_lock = FileLock::try_acquire(marker);
    bool busy = !run_lock;
    if (run_lock) held.push_back(std::move(*run_lock));
    for (const auto& key : busy ? std::vector<std::string>{} : sorted_entries(path, true)) {
      if (!fs::exists(path / key / ".lock")) continue;
      auto lock = FileLock::try_acquire(path / key / ".lock");
      if (!lock) {
        busy = true;
        break;
      }
      held.push_back(std::move(*lock));
    }
    if (busy) {
      report.skipped_in_use.push_back(name);
      continue;
    }
    if (dry_run) {
      report.removed.push_back(name);
      continue;
    }
    // Move aside first so that a half-removed run never looks like a run.
    fs::path doomed = runs_dir / fmt::format(".{}.tmp-clean-{}", name, random_hex(8));
    if (::rename(path.c_str(), doomed.c_str()) != 0) return io_error("clean: rename", path, errno);
    held.clear();
    fs::remove_all(doomed, ec);  // does not follow symlinks inside the run
    if (ec)
      return fail(Errc::io, fmt::format("clean: remove '{}': {}", doomed.string(), ec.message()));
    report.removed.push_back(name);
  }
  // Leftovers of interrupted cleans: only those that still carry a run marker.
  if (!dry_run)
    for (const auto& entry : fs::directory_iterator(runs_dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (is_temp_name(name) && name.find(".tmp-clean-") != std::string::npos &&
          !entry.is_symlink(ec) &&
          fs::is_regular_file(fs::symlink_status(entry.path() / run_marker_name, ec)))
        fs::remove_all(entry.path(), ec);
    }
  std::sort(report.removed.begin(), report.removed.end());
  std::sort(report.not_ours.begin(), report.not_ours.end());
  return report;
}

}  // namespace ts::store
