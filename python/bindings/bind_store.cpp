// tilesmith._core store API: cache root, run ids, tracks, the artifact cache, listing and cleaning.
//   root = tilesmith._core.cache_root()                       # from os.environ unless env= is
//   given t = tilesmith._core.Track(root, tilesmith._core.new_run_id(), key); t.write_attempt(src)
//   h = tilesmith._core.ArtifactCache(root).put({"candidate.py": b"..."})
// Bad input raises ValueError; a missing thing FileNotFoundError; corruption and other file
// system failures tilesmith._core.StoreError (an OSError).
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "raise_error.hpp"
#include "ts/store/store.hpp"

extern char** environ;

namespace nb = nanobind;

namespace ts::python {
namespace {

PyObject* store_error = nullptr;

std::map<std::string, std::string> process_env() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

template <class T>
T ok(Expected<T>&& r) {
  return value_or_raise(std::move(r), store_error);
}

nb::bytes to_bytes(const std::string& s) {
  return nb::bytes(s.data(), s.size());
}

}  // namespace

void bind_store(nb::module_& m) {
  store_error = PyErr_NewException("tilesmith._core.StoreError", PyExc_OSError, nullptr);
  m.attr("StoreError") = nb::handle(store_error);
  m.attr("ATTEMPT_SLOTS") = store::attempt_slots;

  m.def("sha256_hex", [](nb::bytes b) { return store::sha256_hex({b.c_str(), b.size()}); });
  m.def("new_run_id", &store::new_run_id);
  m.def("is_valid_cache_key", [](const std::string& k) { return store::is_valid_cache_key(k); });
  m.def(
      "cache_root",
      [](std::optional<std::map<std::string, std::string>> env) {
        return ok(store::cache_root(env ? *env : process_env())).string();
      },
      nb::arg("env") = nb::none(),
      "TILESMITH_CACHE_DIR, else $HOME/.cache/tilesmith (env defaults to this process's).");
  m.def("write_file_atomic", [](const std::string& path, nb::bytes b) {
    ok(store::write_file_atomic(path, {b.c_str(), b.size()}));
  });
  m.def("read_file", [](const std::string& path) { return to_bytes(ok(store::read_file(path))); });

  nb::class_<store::Track>(m, "Track")
      .def(
          "__init__",
          [](store::Track* self, const std::string& root, const std::string& run_id,
             const std::string& cache_key) {
            new (self) store::Track(ok(store::Track::open(root, run_id, cache_key)));
          },
          nb::arg("root"), nb::arg("run_id"), nb::arg("cache_key"))
      .def_prop_ro("dir", [](const store::Track& t) { return t.dir().string(); })
      .def_prop_ro("run_id", &store::Track::run_id)
      .def_prop_ro("cache_key", &store::Track::cache_key)
      .def("write_attempt",
           [](const store::Track& t, const std::string& text) {
             return ok(t.write_attempt(text)).string();
           })
      .def("latest_attempt",
           [](const store::Track& t) -> std::optional<std::string> {
             auto r = t.latest_attempt();
             if (!r && r.error().code == Errc::not_found) return std::nullopt;
             return ok(std::move(r));
           })
      .def("attempts", [](const store::Track& t) { return ok(t.attempts()); })
      .def("write_profile",
           [](const store::Track& t, const std::string& name, const std::string& json) {
             return ok(t.write_profile(name, json)).string();
           })
      .def("append_trace_line",
           [](const store::Track& t, const std::string& line) { ok(t.append_trace_line(line)); })
      .def("write_cache_hit",
           [](const store::Track& t, const std::string& json) { ok(t.write_cache_hit(json)); });

  nb::class_<store::ArtifactCache>(m, "ArtifactCache")
      .def(nb::init<std::string>(), nb::arg("root"))
      .def_prop_ro("dir", [](const store::ArtifactCache& c) { return c.dir().string(); })
      .def("put",
           [](const store::ArtifactCache& c, const std::map<std::string, nb::bytes>& files) {
             std::vector<store::ArtifactFile> list;
             for (const auto& [name, bytes] : files)
               list.push_back({name, std::string(bytes.c_str(), bytes.size())});
             return ok(c.put(list));
           })
      .def("get",
           [](const store::ArtifactCache& c, const std::string& hash) {
             nb::dict out;
             for (const auto& f : ok(c.get(hash))) out[f.name.c_str()] = to_bytes(f.bytes);
             return out;
           })
      .def("set_index", [](const store::ArtifactCache& c, const std::string& key,
                           const std::string& hash) { ok(c.set_index(key, hash)); })
      .def("lookup",
           [](const store::ArtifactCache& c, const std::string& key) -> std::optional<std::string> {
             auto r = c.lookup(key);
             if (!r && r.error().code == Errc::not_found) return std::nullopt;
             return ok(std::move(r));
           })
      .def(
          "quarantine",
          [](const store::ArtifactCache& c, const std::string& key, const std::string& why) {
            return ok(c.quarantine(key, why)).string();
          },
          nb::arg("cache_key"), nb::arg("why"),
          "Moves a corrupt entry (index and artifact) aside; returns where it went.");

  m.def("list_runs", [](const std::string& root) {
    nb::list out;
    for (const auto& r : ok(store::list_runs(root))) {
      nb::dict d;
      d["run_id"] = r.run_id;
      d["modified_unix_s"] = r.modified_unix_s;
      d["tracks"] = r.tracks;
      out.append(d);
    }
    return out;
  });
  m.def("list_tracks", [](const std::string& root, const std::string& run_id) {
    return ok(store::list_tracks(root, run_id));
  });
  m.def(
      "clean_runs",
      [](const std::string& root, std::optional<double> older_than_days, bool dry_run) {
        auto report = ok(store::clean_runs(root, older_than_days, dry_run));
        nb::dict d;
        d["removed"] = report.removed;
        d["skipped_in_use"] = report.skipped_in_use;
        d["not_ours"] = report.not_ours;
        return d;
      },
      nb::arg("root"), nb::arg("older_than_days") = nb::none(), nb::arg("dry_run") = false,
      "Removes finished runs only (see ts/store/store.hpp); {removed, skipped_in_use, "
      "not_ours}. With dry_run, `removed` lists what would be removed.");
  nb::class_<store::RunLease>(
      m, "RunLease", "Holds a run live (a shared lock on its marker) while this object lives.")
      .def(
          "__init__",
          [](store::RunLease* self, const std::string& root, const std::string& run_id) {
            new (self) store::RunLease(ok(store::RunLease::hold(root, run_id)));
          },
          nb::arg("root"), nb::arg("run_id"))
      .def_prop_ro("dir", [](const store::RunLease& l) { return l.dir().string(); });
}

}  // namespace ts::python
