// On-disk state of Tilesmith: run tracks and the content-addressed artifact cache.
//
//   <root>/runs/<run-id>/.tilesmith-run      the run's marker; a live run holds a shared flock
//                                            on it for its whole life (RunLease)
//   <root>/runs/<run-id>/<cache-key>/        one track: a graph being optimized in one run
//     attempts/attempt_00.py … attempt_04.py rolling, oldest first; at most `attempt_slots`
//     profiles/<name>.json                   host reports of every evaluation
//     traces/trace.jsonl                     per-turn agent traces (the caller writes them only
//                                            with TILESMITH_DEBUG=1)
//     cache.json                             only on an exact artifact-cache hit
//     .lock                                  flock: serializes the attempt shift and appends
//   <root>/artifacts/<sha256>/               an accepted candidate: its files + manifest.json
//   <root>/artifacts/index/<cache-key>       the artifact hash installed for that cache key
//
// Every file becomes visible complete or not at all (temp file in the same directory, fsync,
// rename, fsync of the directory). Temp files start with '.' and are never listed; leftovers
// of a crash are removed the next time their directory is written under its lock.
//
//   auto root = ts::store::cache_root(env);                         // Expected<path>
//   auto track = ts::store::Track::open(*root, ts::store::new_run_id(), key);
//   track->write_attempt(wrapper_source);
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ts/error.hpp"

namespace ts::store {

namespace fs = std::filesystem;

/// Lower-case hex SHA-256 (OpenSSL EVP).
std::string sha256_hex(std::string_view bytes);

/// Writes `bytes` to `path` so that readers see the old content or the new, never a mix. The
/// parent directory must exist.
Expected<void> write_file_atomic(const fs::path& path, std::string_view bytes);
/// A regular file's bytes; anything else (a FIFO, a device, a directory) is Errc::io, without
/// blocking.
Expected<std::string> read_file(const fs::path& path);

/// An flock() on `path` (created if missing), released by the destructor. Works between
/// processes and between threads (each FileLock opens its own file description).
class FileLock {
 public:
  enum class Mode { exclusive, shared };
  /// Blocks until the lock is held or `timeout_s` passes (timeout_s < 0: wait forever).
  static Expected<FileLock> acquire(const fs::path& path, Mode mode = Mode::exclusive,
                                    double timeout_s = -1);
  /// Errc::unavailable at once when another holder has it.
  static Expected<FileLock> try_acquire(const fs::path& path, Mode mode = Mode::exclusive);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

/// TILESMITH_CACHE_DIR when set and non-empty, else $HOME/.cache/tilesmith.
/// Errc::not_found when neither is available.
Expected<fs::path> cache_root(const std::map<std::string, std::string>& env);

/// "20260101T120000.123456Z-<pid>-<8 hex>": UTC time first, so ids sort by start time.
std::string new_run_id();
bool is_valid_run_id(std::string_view id);      // [A-Za-z0-9._-], no leading '.', <= 128 chars
bool is_valid_cache_key(std::string_view key);  // exactly 64 lower-case hex digits

inline constexpr int attempt_slots = 5;

inline constexpr const char* run_marker_name = ".tilesmith-run";

/// Holds a run open: the marker is created if missing and a shared flock on it is held until
/// destruction. clean_runs never removes a run whose marker is locked by a live process.
class RunLease {
 public:
  static Expected<RunLease> hold(const fs::path& root, std::string_view run_id);
  const fs::path& dir() const { return dir_; }

 private:
  RunLease(fs::path dir, FileLock lock) : dir_(std::move(dir)), lock_(std::move(lock)) {}
  fs::path dir_;
  FileLock lock_;
};

class Track {
 public:
  /// Creates <root>/runs/<run_id>/<cache_key>/ (and the run's marker) and its subfolders.
  static Expected<Track> open(const fs::path& root, std::string_view run_id,
                              std::string_view cache_key);

  const fs::path& dir() const { return dir_; }
  const std::string& run_id() const { return run_id_; }
  const std::string& cache_key() const { return cache_key_; }

  /// Stores the next attempt and returns its path. With all slots used, the oldest is dropped
  /// and the rest move down one slot. Done under the track lock: concurrent writers (threads or
  /// processes) neither lose nor duplicate an attempt.
  Expected<fs::path> write_attempt(std::string_view text) const;
  /// Errc::not_found when there is none yet.
  Expected<std::string> latest_attempt() const;
  /// Oldest first.
  Expected<std::vector<std::string>> attempts() const;

  /// profiles/<name>.json; `name` is a plain file name ([A-Za-z0-9._-]), `json_text` must parse.
  Expected<fs::path> write_profile(std::string_view name, std::string_view json_text) const;
  /// Appends one JSON object as a line to traces/trace.jsonl (no embedded newlines).
  Expected<void> append_trace_line(std::string_view json_line) const;
  Expected<void> write_cache_hit(std::string_view json_text) const;

 private:
  Track(fs::path dir, std::string run_id, std::string cache_key)
      : dir_(std::move(dir)), run_id_(std::move(run_id)), cache_key_(std::move(cache_key)) {}
  fs::path dir_;
  std::string run_id_;
  std::string cache_key_;
};

struct ArtifactFile {
  std::string name;  // plain file name ([A-Za-z0-9._-], no leading '.', not manifest.json)
  std::string bytes;
};

/// Content-addressed store of accepted candidates. The artifact hash is the SHA-256 of its
/// manifest (sorted "<sha256>  <name>\n" lines), so equal file sets share one entry.
class ArtifactCache {
 public:
  explicit ArtifactCache(fs::path root) : dir_(std::move(root) / "artifacts") {}

  /// Stores the files (atomically: a temp directory renamed into place) and returns the hash.
  Expected<std::string> put(const std::vector<ArtifactFile>& files) const;
  /// Verifies the manifest and every file's hash first; corruption is Errc::io, naming the file.
  /// Errc::not_found when absent.
  Expected<std::vector<ArtifactFile>> get(std::string_view hash) const;

  /// cache key -> artifact hash; the artifact must exist and verify.
  Expected<void> set_index(std::string_view cache_key, std::string_view hash) const;
  /// Errc::not_found when the key has no entry.
  Expected<std::string> lookup(std::string_view cache_key) const;
  /// Moves the key's index entry, and the artifact it names, to quarantine/<key>-<hex>/ with
  /// why.txt: a corrupt entry is kept for inspection but never read again. Returns that folder.
  Expected<fs::path> quarantine(std::string_view cache_key, std::string_view why) const;

  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

struct RunInfo {
  std::string run_id;
  std::int64_t modified_unix_s = 0;  // last write time of the run directory
  std::size_t tracks = 0;
};

/// Runs under <root>/runs, sorted by id (= by start time). An absent runs/ is an empty list.
Expected<std::vector<RunInfo>> list_runs(const fs::path& root);
/// Cache keys of the tracks of one run, sorted.
Expected<std::vector<std::string>> list_tracks(const fs::path& root, std::string_view run_id);

struct CleanReport {
  std::vector<std::string> removed;         // or, with dry_run, what would be
  std::vector<std::string> skipped_in_use;  // a live process holds the run or a track lock
  std::vector<std::string> not_ours;        // "<name>: why": no marker, a link, not a run id
};
/// Removes every finished run, or those last modified more than `older_than_days` ago. Only a
/// real directory (not a link) under a real <root>/runs, named like a run id, holding a regular
/// marker file that no live process has locked, and no track lock held, is a finished run;
/// everything else stays and is listed. With `dry_run`, nothing is removed.
Expected<CleanReport> clean_runs(const fs::path& root,
                                 std::optional<double> older_than_days = std::nullopt,
                                 bool dry_run = false);

}  // namespace ts::store
