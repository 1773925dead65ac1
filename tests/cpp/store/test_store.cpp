// The store: hashing, atomic files, locks, the rolling attempt ring under concurrency, the
// artifact cache's corruption checks, listing and cleaning.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ts/store/store.hpp"

namespace {

namespace fs = std::filesystem;
using namespace ts::store;

const std::string key_a(64, 'a');

std::string fmt_attempt(int who, int seq) {
  return "writer " + std::to_string(who) + " seq " + std::to_string(seq) + "\n" +
         std::string(4096, 'x');  // big enough that a torn write would show
}
const std::string key_b = sha256_hex("graph b");

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ts_store_test_" + new_run_id());
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

void write_raw(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Names, RunIdsAreUniqueSortableAndValid) {
  std::string prev;
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string id = new_run_id();
    EXPECT_TRUE(is_valid_run_id(id)) << id;
    EXPECT_TRUE(seen.insert(id).second) << "duplicate " << id;
    EXPECT_LE(prev.substr(0, 22), id.substr(0, 22));  // the time prefix never goes backwards
    prev = id;
  }
  EXPECT_FALSE(is_valid_run_id(""));
  EXPECT_FALSE(is_valid_run_id(".."));
  EXPECT_FALSE(is_valid_run_id("a/b"));
  EXPECT_TRUE(is_valid_cache_key(key_b));
  EXPECT_FALSE(is_valid_cache_key(std::string(63, 'a')));
  EXPECT_FALSE(is_valid_cache_key(std::string(64, 'A')));
  EXPECT_FALSE(is_valid_cache_key(std::string(64, 'g')));
}

TEST(Names, CacheRootResolution) {
  EXPECT_EQ(*cache_root({{"TILESMITH_CACHE_DIR", "/x/y"}, {"HOME", "/h"}}), fs::path("/x/y"));
  EXPECT_EQ(*cache_root({{"TILESMITH_CACHE_DIR", ""}, {"HOME", "/h"}}),
            fs::path("/h/.cache/tilesmith"));
  auto none = cache_root({});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ts::Errc::not_found);
}

TEST_F(StoreTest, AtomicWriteAndRead) {
  fs::path p = root_ / "f.txt";
  ASSERT_TRUE(write_file_atomic(p, "one"));
  ASSERT_TRUE(write_file_atomic(p, "two"));
  EXPECT_EQ(*read_file(p), "two");
  // No temp files left behind.
  int entries = 0;
  for ([[maybe_unused]] auto& e : fs::directory_iterator(root_)) ++entries;
  EXPECT_EQ(entries, 1);
  auto missing = read_file(root_ / "nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ts::Errc::not_found);
  auto no_dir = write_file_atomic(root_ / "no" / "dir" / "f", "x");
  ASSERT_FALSE(no_dir);
}

TEST_F(StoreTest, ReadersNeverSeeAHalfWrittenFile) {
  fs::path p = root_ / "big";
  const std::string a(1 << 20, 'a'), b(1 << 20, 'b');
  ASSERT_TRUE(write_file_atomic(p, a));
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; i < 50; ++i) (void)write_file_atomic(p, i % 2 ? a : b);
    stop = true;
  });
  int reads = 0;
  while (!stop) {
    auto text = read_file(p);
    ASSERT_TRUE(text);
    ASSERT_TRUE(*text == a || *text == b) << "torn read of size " << text->size();
    ++reads;
  }
  writer.join();
  EXPECT_GT(reads, 0);
}

TEST_F(StoreTest, FileLockExcludesOtherHolders) {
  fs::path lock_path = root_ / "l.lock";
  auto held = FileLock::acquire(lock_path);
  ASSERT_TRUE(held);
  auto second = FileLock::try_acquire(lock_path);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, ts::Errc::unavailable);
  auto timed = FileLock::acquire(lock_path, FileLock::Mode::exclusive, 0.05);
  ASSERT_FALSE(timed);
  // Another process cannot take it either.
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(FileLock::try_acquire(lock_path) ? 1 : 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  { FileLock released = std::move(*held); }
  EXPECT_TRUE(FileLock::try_acquire(lock_path));
  // Shared locks coexist.
  auto s1 = FileLock::acquire(lock_path, FileLock::Mode::shared);
  auto s2 = FileLock::try_acquire(lock_path, FileLock::Mode::shared);
  EXPECT_TRUE(s1 && s2);
}

TEST_F(StoreTest, TrackLayoutAndValidation) {
  auto track = Track::open(root_, "run1", key_a);
  ASSERT_TRUE(track) << track.error().message;
  EXPECT_EQ(track->dir(), root_ / "runs" / "run1" / key_a);
  for (const char* sub : {"attempts", "profiles", "traces"})
    EXPECT_TRUE(fs::is_directory(track->dir() / sub));
  EXPECT_FALSE(Track::open(root_, "run1", "abc"));
  EXPECT_FALSE(Track::open(root_, "../escape", key_a));
  EXPECT_FALSE(Track::open(root_, "run1", std::string(64, 'A')));
}

TEST_F(StoreTest, AttemptsRollAfterFive) {
  auto track = Track::open(root_, "run1", key_a);
  ASSERT_TRUE(track);
  auto none = track->latest_attempt();
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ts::Errc::not_found);
  for (int i = 0; i < 5; ++i) {
    auto path = track->write_attempt("attempt " + std::to_string(i));
    ASSERT_TRUE(path);
    EXPECT_EQ(path->filename(), "attempt_0" + std::to_string(i) + ".py");
  }
  EXPECT_EQ(*track->latest_attempt(), "attempt 4");
  for (int i = 5; i < 8; ++i) ASSERT_TRUE(track->write_attempt("attempt " + std::to_string(i)));
  auto all = track->attempts();
  ASSERT_TRUE(all);
  EXPECT_EQ(*all, (std::vector<std::string>{"attempt 3", "attempt 4", "attempt 5", "attempt 6",
                                            "attempt 7"}));
  EXPECT_EQ(*read_file(track->dir() / "attempts" / "attempt_00.py"), "attempt 3");
  EXPECT_EQ(*read_file(track->dir() / "attempts" / "attempt_04.py"), "attempt 7");
}

TEST_F(StoreTest, AttemptsSurviveACrashMidShiftAndLeftoverTempFiles) {
  auto track = Track::open(root_, "run1", key_a);
  ASSERT_TRUE(track);
  const fs::path dir = track->dir() / "attempts";
  // State after a crash: 00, 02, 04 present (01 and 03 moved away), and a temp file of an
  // interrupted write.
  write_raw(dir / "attempt_00.py", "a");
  write_raw(dir / "attempt_02.py", "b");
  write_raw(dir / "attempt_04.py", "c");
  write_raw(dir / ".attempt_03.py.tmp-1-deadbeef", "half");
  EXPECT_EQ(*track->attempts(), (std::vector<std::string>{"a", "b", "c"}));  // temp ignored
  ASSERT_TRUE(track->write_attempt("d"));
  EXPECT_EQ(*track->attempts(), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_FALSE(fs::exists(dir / ".attempt_03.py.tmp-1-deadbeef"));  // cleaned under the lock
  EXPECT_EQ(*read_file(dir / "attempt_03.py"), "d");
}

// Writers in separate processes and threads hammer one track. Invariants: exactly 5 attempts,
// no duplicates, none torn, and each writer's attempts appear in the order it wrote them.
TEST_F(StoreTest, ConcurrentWritersNeitherLoseNorDuplicate) {
  constexpr int processes = 3, threads = 3, writes = 30;
  const std::string run = "hammer";
  auto writer = [&](int who) {
    auto track = Track::open(root_, run, key_a);
    if (!track) return false;
    for (int i = 0; i < writes; ++i)
      if (!track->write_attempt(fmt_attempt(who, i))) return false;
    return true;
  };
  std::vector<pid_t> pids;
  for (int p = 0; p < processes; ++p) {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(writer(100 + p) ? 0 : 1);
    pids.push_back(pid);
  }
  std::vector<std::thread> pool;
  std::atomic<int> thread_failures{0};
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { thread_failures += !writer(t); });
  for (auto& th : pool) th.join();
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(thread_failures, 0);

  auto track = Track::open(root_, run, key_a);
  auto all = track->attempts();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 5u);
  std::set<std::string> distinct(all->begin(), all->end());
  EXPECT_EQ(distinct.size(), 5u);
  std::map<int, int> last_seq;
  for (const auto& text : *all) {
    int who = -1, seq = -1;
    ASSERT_EQ(std::sscanf(text.c_str(), "writer %d seq %d", &who, &seq), 2) << text;
    if (last_seq.count(who)) {
      EXPECT_GT(seq, last_seq[who]) << "out of order for writer " << who;
    }
    last_seq[who] = seq;
  }
}

TEST_F(StoreTest, ConcurrentWritersBelowCapacityKeepEverything) {
  // Four processes write one attempt each at the same moment: all four must be there.
  std::vector<pid_t> pids;
  for (int p = 0; p < 4; ++p) {
    pid_t pid = ::fork();
    if (pid == 0) {
      auto track = Track::open(root_, "few", key_a);
      ::_exit(track && track->write_attempt("from " + std::to_string(p)) ? 0 : 1);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  auto all = Track::open(root_, "few", key_a)->attempts();
  ASSERT_TRUE(all);
  std::set<std::string> got(all->begin(), all->end());
  EXPECT_EQ(got, (std::set<std::string>{"from 0", "from 1", "from 2", "from 3"}));
}

TEST_F(StoreTest, ProfilesTracesAndCacheHit) {
  auto track = Track::open(root_, "run1", key_a);
  ASSERT_TRUE(track);
  auto p = track->write_profile("eval_000", R"({"ratio": 0.9})");
  ASSERT_TRUE(p);
  EXPECT_EQ(*read_file(*p), R"({"ratio": 0.9})");
  EXPECT_EQ(track->write_profile("../x", "{}").error().code, ts::Errc::invalid_argument);
  EXPECT_EQ(track->write_profile("bad", "{not json").error().code, ts::Errc::parse);

  ASSERT_TRUE(track->append_trace_line(R"({"turn": 1})"));
  ASSERT_TRUE(track->append_trace_line(R"({"turn": 2})"));
  EXPECT_EQ(*read_file(track->dir() / "traces" / "trace.jsonl"), "{\"turn\": 1}\n{\"turn\": 2}\n");
  EXPECT_FALSE(track->append_trace_line("{}\n{}"));
  EXPECT_FALSE(track->append_trace_line("nope"));

  EXPECT_FALSE(fs::exists(track->dir() / "cache.json"));
  ASSERT_TRUE(track->write_cache_hit(R"({"artifact": "x"})"));
  EXPECT_EQ(*read_file(track->dir() / "cache.json"), R"({"artifact": "x"})");
}

TEST_F(StoreTest, ArtifactRoundTripIsContentAddressed) {
  ArtifactCache cache(root_);
  std::vector<ArtifactFile> files = {{"candidate.py", "def call(args): ..."},
                                     {"meta.json", R"({"ratio": 0.8})"}};
  auto hash = cache.put(files);
  ASSERT_TRUE(hash) << hash.error().message;
  EXPECT_TRUE(is_valid_cache_key(*hash));
  // Same content in another order: same hash, stored once.
  auto again = cache.put({files[1], files[0]});
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *hash);
  auto got = cache.get(*hash);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].name, "candidate.py");
  EXPECT_EQ((*got)[0].bytes, files[0].bytes);
  EXPECT_EQ((*got)[1].bytes, files[1].bytes);

  EXPECT_EQ(cache.get(std::string(64, '0')).error().code, ts::Errc::not_found);
  EXPECT_EQ(cache.get("xyz").error().code, ts::Errc::invalid_argument);
  EXPECT_FALSE(cache.put({}));
  EXPECT_FALSE(cache.put({{"../evil", "x"}}));
  EXPECT_FALSE(cache.put({{"manifest.json", "x"}}));
  EXPECT_FALSE(cache.put({{"a", "1"}, {"a", "2"}}));
}

TEST_F(StoreTest, ArtifactCorruptionIsAnErrorNeverContent) {
  ArtifactCache cache(root_);
  auto hash = cache.put({{"candidate.py", "good code"}, {"meta.json", "{}"}});
  ASSERT_TRUE(hash);
  const fs::path entry = cache.dir() / *hash;

  write_raw(entry / "candidate.py", "evil code");  // same size class, different bytes
  auto bad = cache.get(*hash);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ts::Errc::io);
  EXPECT_NE(bad.error().message.find("candidate.py"), std::string::npos);

  // put() of the same content repairs the entry.
  ASSERT_TRUE(cache.put({{"candidate.py", "good code"}, {"meta.json", "{}"}}));
  ASSERT_TRUE(cache.get(*hash));

  fs::remove(entry / "meta.json");
  EXPECT_FALSE(cache.get(*hash));
  ASSERT_TRUE(cache.put({{"candidate.py", "good code"}, {"meta.json", "{}"}}));

  // A manifest edited to match tampered content no longer matches the directory name.
  auto manifest = *read_file(entry / "manifest.json");
  write_raw(entry / "candidate.py", "evil code");
  auto pos = manifest.find(sha256_hex("good code"));
  manifest.replace(pos, 64, sha256_hex("evil code"));
  write_raw(entry / "manifest.json", manifest);
  auto forged = cache.get(*hash);
  ASSERT_FALSE(forged);
  EXPECT_NE(forged.error().message.find("manifest"), std::string::npos);
}

TEST_F(StoreTest, ArtifactIndex) {
  ArtifactCache cache(root_);
  auto hash = cache.put({{"candidate.py", "x"}});
  ASSERT_TRUE(hash);
  EXPECT_EQ(cache.lookup(key_b).error().code, ts::Errc::not_found);
  ASSERT_TRUE(cache.set_index(key_b, *hash));
  EXPECT_EQ(*cache.lookup(key_b), *hash);
  EXPECT_FALSE(cache.set_index(key_b, std::string(64, '1')));  // no such artifact
  EXPECT_FALSE(cache.set_index("short", *hash));
  EXPECT_EQ(*cache.lookup(key_b), *hash);  // unchanged by the failed updates
}

TEST_F(StoreTest, ConcurrentPutsOfTheSameArtifact) {
  ArtifactCache cache(root_);
  std::vector<std::thread> pool;
  std::vector<std::string> hashes(6);
  for (int t = 0; t < 6; ++t)
    pool.emplace_back([&, t] {
      auto h = cache.put({{"candidate.py", "same"}, {"meta.json", "{}"}});
      hashes[t] = h ? *h : "failed: " + h.error().message;
    });
  for (auto& th : pool) th.join();
  for (const auto& h : hashes) EXPECT_EQ(h, hashes[0]);
  EXPECT_TRUE(cache.get(hashes[0]));
}

TEST_F(StoreTest, ListAndClean) {
  ASSERT_TRUE(list_runs(root_)->empty());  // no runs/ yet
  ASSERT_TRUE(Track::open(root_, "run_old", key_a));
  ASSERT_TRUE(Track::open(root_, "run_new", key_a));
  ASSERT_TRUE(Track::open(root_, "run_new", key_b));
  auto runs = list_runs(root_);
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].run_id, "run_new");
  EXPECT_EQ((*runs)[0].tracks, 2u);
  EXPECT_EQ((*runs)[1].tracks, 1u);
  EXPECT_GT((*runs)[0].modified_unix_s, 0);
  auto tracks = list_tracks(root_, "run_new");
  ASSERT_TRUE(tracks);
  EXPECT_EQ(tracks->size(), 2u);
  EXPECT_EQ(list_tracks(root_, "missing").error().code, ts::Errc::not_found);

  // Something outside root that a symlink in runs/ points at must survive any clean.
  fs::path outside = root_.string() + "_outside";
  fs::create_directories(outside);
  write_raw(outside / "precious", "keep");
  fs::create_directory_symlink(outside, root_ / "runs" / "linked");
  fs::create_directory_symlink(outside, root_ / "runs" / "run_new" / key_a / "link_in_track");

  fs::last_write_time(root_ / "runs" / "run_old",
                      fs::file_time_type::clock::now() - std::chrono::hours(24 * 10));
  auto partial = clean_runs(root_, 7.0);
  ASSERT_TRUE(partial);
  EXPECT_EQ(partial->removed, std::vector<std::string>{"run_old"});
  EXPECT_TRUE(fs::exists(root_ / "runs" / "run_new"));

  {  // a track lock held by a live writer keeps its run
    auto busy = FileLock::acquire(root_ / "runs" / "run_new" / key_b / ".lock");
    ASSERT_TRUE(busy);
    auto skipped = clean_runs(root_);
    ASSERT_TRUE(skipped);
    EXPECT_EQ(skipped->skipped_in_use, std::vector<std::string>{"run_new"});
  }
  auto all = clean_runs(root_);
  ASSERT_TRUE(all);
  EXPECT_TRUE(list_runs(root_)->empty());
  EXPECT_EQ(*read_file(outside / "precious"), "keep");
  fs::remove_all(outside);
}

}  // namespace
