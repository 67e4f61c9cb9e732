// Which transport joins each pair of MPI ranks, as observed rather than as configured (the
// multinode tests: tests/integration/multinode_test.cpp). Every pair exchanges messages in
// both directions; then each rank lists
//   - the shared-memory segments it has mapped (Open MPI's vader segments in
//     /proc/self/maps, named with the host and node-local rank of the rank that made one),
//   - its own TCP connections (the sockets among its file descriptors, read from
//     /proc/net/tcp of its network namespace);
// and rank 0 prints one line per pair:
//   pair 0 1 hosts n1 n1 shm yes tcp no
//   pair 0 2 hosts n1 n2 shm no tcp yes
// "shm yes": one of the two has mapped the other's segment; "tcp yes": a socket of one is
// connected to a socket of the other. Exit 1 when a pair exchanged no message.
#include <mpi.h>

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kText = 8192;

std::string host_name() {
  char h[256] = {0};
  gethostname(h, sizeof h - 1);
  return h;
}

// The inodes of this process's sockets.
std::set<std::string> socket_inodes() {
  std::set<std::string> out;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    char target[256] = {0};
    const std::string p = std::string("/proc/self/fd/") + e->d_name;
    const ssize_t n = readlink(p.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    const std::string t(target, static_cast<std::size_t>(n));
    if (t.rfind("socket:[", 0) == 0) out.insert(t.substr(8, t.size() - 9));
  }
  closedir(d);
  return out;
}

// This process's established TCP connections: "local remote" pairs as /proc/net/tcp writes
// them (hex address:port), one per line.
std::string my_tcp_connections() {
  const auto mine = socket_inodes();
  std::ifstream in("/proc/net/tcp");
  std::string line, out;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string slot, local, remote, state, skip, inode;
    f >> slot >> local >> remote >> state;
    for (int i = 0; i < 5; ++i) f >> skip;  // tx:rx queues, timer, retransmits, uid, timeout
    f >> inode;
    if (state == "01" && mine.count(inode)) out += local + " " + remote + "\n";
  }
  return out;
}

// The shared-memory segments this process has mapped (their file names).
std::string my_shm_segments() {
  std::ifstream in("/proc/self/maps");
  std::set<std::string> seen;
  std::string line;
  while (std::getline(in, line)) {
    const auto at = line.find("vader_segment");
    if (at != std::string::npos) seen.insert(line.substr(at));
  }
  std::string out;
  for (const auto& s : seen) out += s + "\n";
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

std::vector<std::string> gather(const std::string& mine, int size) {
  std::string slot = mine.substr(0, kText - 1);
  slot.resize(kText, '\0');
  std::vector<char> all(static_cast<std::size_t>(kText) * static_cast<std::size_t>(size));
  MPI_Allgather(slot.data(), kText, MPI_CHAR, all.data(), kText, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < size; ++r) out.emplace_back(all.data() + static_cast<std::ptrdiff_t>(r) * kText);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Every pair, both ways, point to point (a collective might route through a third rank).
  int failures = 0;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    int out = rank * 1000 + peer, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, peer, 7, &in, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (in != peer * 1000 + rank) ++failures;
  }
  const char* local = std::getenv("SLURM_LOCALID");
  const auto hosts = gather(host_name(), size);
  const auto locals = gather(local ? local : "?", size);
  const auto tcp = gather(my_tcp_connections(), size);
  const auto shm = gather(my_shm_segments(), size);
  int all_failures = 0;
  MPI_Reduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int a = 0; a < size; ++a)
      for (int b = a + 1; b < size; ++b) {
        // A segment is named vader_segment.<host>.<job>.<node-local rank> by the rank that made it.
        auto maps_segment_of = [&](int who, int owner) {
          for (const auto& s : lines_of(shm[static_cast<std::size_t>(who)])) {
            const std::string prefix = "vader_segment." + hosts[static_cast<std::size_t>(owner)] + ".";
            if (s.rfind(prefix, 0) == 0 && s.substr(s.rfind('.') + 1) == locals[static_cast<std::size_t>(owner)]) return true;
          }
          return false;
        };
        const bool shared = maps_segment_of(a, b) || maps_segment_of(b, a);
        bool connected = false;
        for (const auto& c : lines_of(tcp[static_cast<std::size_t>(a)])) {
          const std::string l = c.substr(0, c.find(' ')), r = c.substr(c.find(' ') + 1);
          for (const auto& d : lines_of(tcp[static_cast<std::size_t>(b)]))
            if (d == r + " " + l) connected = true;
        }
        std::printf("pair %d %d hosts %s %s shm %s tcp %s\n", a, b, hosts[static_cast<std::size_t>(a)].c_str(),
                    hosts[static_cast<std::size_t>(b)].c_str(), shared ? "yes" : "no", connected ? "yes" : "no");
      }
    std::printf("messages failed: %d\n", all_failures);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
