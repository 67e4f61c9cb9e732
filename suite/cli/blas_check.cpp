// lrbench-blas-check: what the launcher (suite/cli/launcher.cpp) asks, in a child process,
// before it starts lrbench-core, so that a BLAS that computes wrong or crashes with the
// kernels it is offered costs the check and nothing else. It loads the BLAS LibTorch links
// (libblas.so.3: on Debian, the library update-alternatives selects) and prints, a line each,
//   library=<the file the dynamic loader found>   canonical=<that path resolved>
//   core=<openblas_get_corename(), empty where the library is not OpenBLAS>
//   better=<the OPENBLAS_CORETYPE this processor allows where `core` is older, else empty>
// With --test it then multiplies matrices of awkward shapes (odd sizes, transposes, a beta
// term, sizes that OpenBLAS splits over threads) in float32 and float64, compares every
// element with a float64 (for float64, long double) product computed here against the
// rounding error bound of a dot product of that length, and prints
//   test=ok <n> products, the largest error <e> of its bound
// or `test=wrong <which product, element, value and reference>` with exit 1.
// LRB_FAULT_BLAS_CHECK=wrong|crash and LRB_FAULT_BLAS_FALLBACK=<core> are fault trials.
// Linked with the C++ library only (no LibTorch, no MPI): it starts in milliseconds.
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "suite/core/blas_cores.h"

namespace {

// Fortran BLAS (column-major, arguments by reference), as libblas.so.3 exports it.
using SgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                         const int*, const float*, const int*, const float*, float*, const int*);
using DgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                         const int*, const double*, const int*, const double*, double*, const int*);

struct Shape {
  int m, n, k;
};

// Deterministic values in [-1, 1): the same inputs on every machine.
struct Values {
  unsigned long long state = 0x9E3779B97F4A7C15ULL;
  double next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / static_cast<double>(1ULL << 52) - 1.0;
  }
};

// One product C = alpha op(A) op(B) + beta C in type T against a wider reference; returns
// the worst |error| / bound, or a negative number with `wrong` filled where an element is
// beyond its bound or not finite.
template <typename T, typename Gemm>
double check_product(Gemm gemm, const Shape& s, char ta, char tb, Values& values, std::string& wrong) {
  const int lda = ta == 'N' ? s.m : s.k, a_cols = ta == 'N' ? s.k : s.m;
  const int ldb = tb == 'N' ? s.k : s.n, b_cols = tb == 'N' ? s.n : s.k;
  std::vector<T> a(static_cast<std::size_t>(lda) * a_cols), b(static_cast<std::size_t>(ldb) * b_cols),
      c(static_cast<std::size_t>(s.m) * s.n);
  for (auto& x : a) x = static_cast<T>(values.next());
  for (auto& x : b) x = static_cast<T>(values.next());
  for (auto& x : c) x = static_cast<T>(values.next());
  const std::vector<T> c0 = c;
  const T alpha = static_cast<T>(1.5), beta = static_cast<T>(-0.5);
  if (const char* fault = getenv("LRB_FAULT_BLAS_CHECK"); fault && strcmp(fault, "crash") == 0) raise(SIGSEGV);
  gemm(&ta, &tb, &s.m, &s.n, &s.k, &alpha, a.data(), &lda, b.data(), &ldb, &beta, c.data(), &s.m);
  if (const char* fault = getenv("LRB_FAULT_BLAS_CHECK"); fault && strcmp(fault, "wrong") == 0) c[c.size() / 2] += T(1);

  using Wide = std::conditional_t<sizeof(T) == 4, double, long double>;
  const auto at = [](const std::vector<T>& x, int ld, char t, int row, int col) {
    return static_cast<Wide>(t == 'N' ? x[static_cast<std::size_t>(col) * ld + row] : x[static_cast<std::size_t>(row) * ld + col]);
  };
  // A dot product of length k in precision u errs by at most about k·u·Σ|a||b| (Higham,
  // "Accuracy and Stability of Numerical Algorithms", 3.1); blocked kernels and the alpha and
  // beta terms add a few roundings: the bound allows (k + 4)·u·2.
  const Wide u = std::numeric_limits<T>::epsilon() / 2;
  double worst = 0;
  for (int j = 0; j < s.n; ++j)
    for (int i = 0; i < s.m; ++i) {
      Wide sum = 0, magnitude = 0;
      for (int p = 0; p < s.k; ++p) {
        const Wide term = at(a, lda, ta, i, p) * at(b, ldb, tb, p, j);
        sum += term;
        magnitude += std::fabs(term);
      }
      const std::size_t e = static_cast<std::size_t>(j) * s.m + i;
      const Wide reference = alpha * sum + beta * static_cast<Wide>(c0[e]);
      const Wide bound = 2 * (s.k + 4) * u * (std::fabs(alpha) * magnitude + std::fabs(beta * c0[e])) + 4 * u;
      const Wide error = std::fabs(static_cast<Wide>(c[e]) - reference);
      if (!std::isfinite(static_cast<double>(c[e])) || error > bound) {
        char line[320];
        std::snprintf(line, sizeof line, "%s %dx%dx%d op(A)=%c op(B)=%c: C[%d,%d] = %.9g, the reference %.9Lg (error %.3Lg, bound %.3Lg)",
                      sizeof(T) == 4 ? "sgemm" : "dgemm", s.m, s.n, s.k, ta, tb, i, j, static_cast<double>(c[e]),
                      static_cast<long double>(reference), static_cast<long double>(error), static_cast<long double>(bound));
        wrong = line;
        return -1;
      }
      worst = std::max(worst, static_cast<double>(error / bound));
    }
  return worst;
}

std::string loaded_path(void* handle) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) return "";
  return map->l_name;
}

}  // namespace

int main(int argc, char** argv) {
  const bool test = argc > 1 && strcmp(argv[1], "--test") == 0;
  if (argc > 2 || (argc == 2 && !test)) {
    std::fprintf(stderr, "usage: lrbench-blas-check [--test]  (run by the lrbench launcher)\n");
    return 2;
  }
  void* blas = dlopen("libblas.so.3", RTLD_NOW | RTLD_GLOBAL);
  if (blas == nullptr) {
    std::printf("error=cannot load libblas.so.3: %s\n", dlerror());
    return 1;
  }
  const std::string library = loaded_path(blas);
  char resolved[PATH_MAX];
  std::printf("library=%s\ncanonical=%s\n", library.c_str(), realpath(library.c_str(), resolved) ? resolved : library.c_str());
  using CoreFn = char* (*)();
  const auto corename = reinterpret_cast<CoreFn>(dlsym(blas, "openblas_get_corename"));
  std::string core = corename ? corename() : "";
  // Fault trials (tests/unit/cli/blas_core_test.cpp): a library that fell back, on any machine.
  if (const char* fallback = getenv("LRB_FAULT_BLAS_FALLBACK"); fallback && !core.empty() && getenv("OPENBLAS_CORETYPE") == nullptr)
    core = fallback;
  const std::string better =
      core.empty() ? "" : lrb::better_blas_core(core, __builtin_cpu_supports("avx2"), __builtin_cpu_supports("avx512f"));
  std::printf("core=%s\nbetter=%s\n", core.c_str(), better.c_str());
  std::fflush(stdout);
  if (!test) return 0;

  const auto sgemm = reinterpret_cast<SgemmFn>(dlsym(blas, "sgemm_"));
  const auto dgemm = reinterpret_cast<DgemmFn>(dlsym(blas, "dgemm_"));
  if (sgemm == nullptr || dgemm == nullptr) {
    std::printf("test=wrong the library has no sgemm_ or dgemm_\n");
    return 1;
  }
  // Edges of the kernels' blocking (1, odd, one past a power of two) and products large
  // enough that OpenBLAS splits them over its threads.
  const Shape shapes[] = {{1, 1, 1}, {7, 5, 3}, {17, 33, 65}, {64, 64, 64}, {129, 67, 257}, {257, 255, 129}, {515, 300, 64}};
  Values values;
  std::string wrong;
  double worst = 0;
  int products = 0;
  for (const Shape& s : shapes)
    for (char ta : {'N', 'T'})
      for (char tb : {'N', 'T'}) {
        for (int precision = 0; precision < 2; ++precision) {
          const double w = precision == 0 ? check_product<float>(sgemm, s, ta, tb, values, wrong)
                                          : check_product<double>(dgemm, s, ta, tb, values, wrong);
          if (w < 0) {
            std::printf("test=wrong %s\n", wrong.c_str());
            return 1;
          }
          worst = std::max(worst, w);
          ++products;
        }
      }
  std::printf("test=ok %d products, the largest error %.2g of its bound\n", products, worst);
  return 0;
}
