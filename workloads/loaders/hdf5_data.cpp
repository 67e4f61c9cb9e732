#include "workloads/loaders/hdf5_data.h"

#include <ATen/ATen.h>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <optional>

#include "suite/core/errors.h"
#include "suite/core/file_cache.h"
#include "suite/core/shape_text.h"
#include "suite/hdf5/h5.h"

namespace lrb {

namespace {

namespace fs = std::filesystem;

constexpr const char* kFormatHelp = "see workloads/README.md, task hdf5-file";
// The largest vocabulary (token ids 0 .. kMaxVocabulary-1) and number of classes a model is
// built for: an embedding or a head beyond these is a damaged or misread file, not data.
constexpr std::int64_t kMaxVocabulary = std::int64_t{1} << 24;
constexpr std::int64_t kMaxClasses = std::int64_t{1} << 20;


// "[r, c]" of the flat (row-major) index i in an array of shape dims.
std::string index_text(const std::vector<hsize_t>& dims, std::int64_t i) {
  std::vector<std::int64_t> index(dims.size());
  for (std::size_t d = dims.size(); d-- > 0;) {
    index[d] = i % static_cast<std::int64_t>(dims[d]);
    i /= static_cast<std::int64_t>(dims[d]);
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

// Reads everything for one file, turning HDF5 failures into UserErrors that name it.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  Hdf5Data read() {
    std::error_code ec;
    if (!fs::exists(path_, ec))
      throw UserError(path_ + ": no such file; point the option 'path' of task hdf5-file at an HDF5 file");
    if (!fs::is_regular_file(path_, ec)) throw UserError(path_ + ": not a regular file; 'path' must name an HDF5 file");
    try {
      file_ = h5::open_file(path_);
    } catch (const h5::Error& e) {
      throw UserError(path_ + ": cannot open it as an HDF5 file (" + e.stack() + "); is it truncated, or another format?");
    }
    Hdf5Data d;
    d.path = path_;
    try {
      root_ = h5::open_group(file_, "/");
      read_x(d);
      read_y(d);
      read_split(d);
      read_attributes(d);
    } catch (const h5::Error& e) {
      // Anything else HDF5 refuses in the user's file is theirs to fix (exit 2), not a bug.
      fail("cannot read it (" + e.operation() + " failed: " + e.stack() + "); is the file damaged? export it again");
    }
    return d;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw UserError(path_ + ": " + what); }

  h5::Dataset dataset(const std::string& name, bool required) {
    if (!h5::link_exists(root_, name)) {
      if (!required) return {};
      fail("no dataset /" + name + "; an hdf5-file data set needs /x (inputs) and /y (labels), " + kFormatHelp);
    }
    try {
      return h5::open_dataset(root_, name);
    } catch (const h5::Error&) {
      fail("/" + name + " is not a dataset (a group?); store the array itself at /" + name);
    }
  }

  // The whole dataset converted to `dtype` (HDF5 converts between numeric types). Unsigned
  // 64-bit integers are read as they are: HDF5 would clamp those above int64's range to
  // its maximum, hiding the value.
  at::Tensor read_as(const h5::Dataset& ds, const std::string& name, at::ScalarType dtype) {
    try {
      const auto dims = h5::dataset_dims(ds);
      if (const std::string size = h5::readable_size_problem(ds, at::elementSize(dtype)); !size.empty())
        fail("/" + name + " " + size + "; the file is damaged, or (for a shape beyond memory) read it on a larger machine");
      std::vector<std::int64_t> sizes(dims.begin(), dims.end());
      at::Tensor t = at::empty(sizes, at::TensorOptions().dtype(dtype));
      const h5::ElementType et = h5::dataset_element_type(ds);
      const bool u64 = dtype == at::kLong && et.type_class == H5T_INTEGER && !et.is_signed && et.size == 8;
      h5::read_array_dataset(ds, dtype == at::kLong ? (u64 ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64) : H5T_NATIVE_FLOAT,
                             t.data_ptr());
      if (u64) {
        const at::Tensor flat = t.reshape({-1});
        const at::Tensor huge = flat.lt(0);  // bit patterns of values >= 2^63
        if (huge.any().item<bool>()) {
          const auto i = huge.to(at::kInt).argmax().item<std::int64_t>();
          fail(fmt::format("/{}{} = {} is beyond any vocabulary or class count lrbench supports", name,
                           index_text(dims, i), static_cast<std::uint64_t>(flat[i].item<std::int64_t>())));
        }
      }
      return t;
    } catch (const h5::Error& e) {
      if (e.is_checksum_failure()) fail("/" + name + " is damaged (checksum error); copy or export the file again");
      fail("cannot read /" + name + " (" + e.stack() + ")");
    }
  }

  struct Info {
    std::vector<hsize_t> dims;
    h5::ElementType type;
  };
  Info info(const h5::Dataset& ds, const std::string& name) {
    try {
      Info i{h5::dataset_dims(ds), h5::dataset_element_type(ds)};
      if (i.type.type_class != H5T_INTEGER && i.type.type_class != H5T_FLOAT)
        fail("/" + name + " does not hold numbers (integers or floats); " + kFormatHelp);
      return i;
    } catch (const h5::Error& e) {
      fail("cannot read the shape of /" + name + " (" + e.stack() + ")");
    }
  }

  void read_x(Hdf5Data& d) {
    h5::Dataset ds = dataset("x", true);
    const Info i = info(ds, "x");
    const bool ints = i.type.type_class == H5T_INTEGER;
    const auto rank = i.dims.size();
    if (ints && rank != 2)
      fail("/x holds integers of shape " + shape_text(i.dims) +
           "; token inputs are N x L (records x positions); a signal (N x L x C) or an image grid (N x C x H x W) "
           "must be stored as floats");
    if (!ints && rank != 3 && rank != 4)
      fail("/x holds floats of shape " + shape_text(i.dims) +
           "; expected N x L x C (a signal; one channel is N x L x 1) or N x C x H x W (an image grid)");
    for (auto n : i.dims)
      if (n == 0) fail("/x of shape " + shape_text(i.dims) + " is empty; every dimension needs at least one element");
    n_ = static_cast<std::int64_t>(i.dims[0]);
    d.modality = ints ? Modality::Tokens : rank == 3 ? Modality::Signal : Modality::Grid;
    d.x = read_as(ds, "x", ints ? at::kLong : at::kFloat);
    if (ints) {
      const at::Tensor bad = (d.x < 0).any(1);
      if (bad.any().item<bool>()) {
        const auto r = bad.to(at::kInt).argmax().item<std::int64_t>();
        const auto pos = (d.x[r] < 0).to(at::kInt).argmax().item<std::int64_t>();
        fail(fmt::format("/x[{}, {}] = {} is negative; token ids are 0 .. vocab_size-1", r, pos,
                         d.x[r][pos].item<std::int64_t>()));
      }
    } else {
      const at::Tensor finite = at::isfinite(d.x.reshape({n_, -1})).all(1);
      if (!finite.all().item<bool>()) {
        const auto r = finite.logical_not().to(at::kInt).argmax().item<std::int64_t>();
        fail(fmt::format("/x[{}] (record {}) holds a non-finite value (NaN or infinity, or beyond float32's range); "
                         "clean or drop that record",
                         r, r));
      }
    }
  }

  void read_y(Hdf5Data& d) {
    h5::Dataset ds = dataset("y", true);
    const Info i = info(ds, "y");
    if (i.dims.empty() || i.dims.size() > 2)
      fail("/y has shape " + shape_text(i.dims) + "; expected [" + std::to_string(n_) +
           "] (one class id per record) or [" + std::to_string(n_) + ", K] (0/1 multi-label targets)");
    if (static_cast<std::int64_t>(i.dims[0]) != n_)
      fail(fmt::format("/y has {} records but /x has {}; both need one row per record", i.dims[0], n_));
    if (i.dims.size() == 1) {
      if (i.type.type_class != H5T_INTEGER)
        fail("/y holds floats; single-label class ids must be integers 0..K-1 (multi-label targets are N x K of 0/1)");
      d.y = read_as(ds, "y", at::kLong);
      const auto r = (d.y < 0).to(at::kInt).argmax().item<std::int64_t>();
      if (d.y[r].item<std::int64_t>() < 0)
        fail(fmt::format("/y[{}] = {} is negative; class ids are 0 .. num_classes-1", r, d.y[r].item<std::int64_t>()));
      return;
    }
    if (i.dims[1] == 0) fail("/y has shape " + shape_text(i.dims) + ": no labels; multi-label targets are N x K, K >= 1");
    d.multilabel = true;
    d.y = read_as(ds, "y", at::kFloat);
    const at::Tensor ok = (d.y.eq(0) | d.y.eq(1)).all(1);
    if (!ok.all().item<bool>()) {
      const auto r = ok.logical_not().to(at::kInt).argmax().item<std::int64_t>();
      const at::Tensor row = d.y[r];
      const auto k = (row.ne(0) & row.ne(1)).to(at::kInt).argmax().item<std::int64_t>();
      fail(fmt::format("/y[{}, {}] = {}; multi-label targets are 0 or 1", r, k, row[k].item<float>()));
    }
  }

  void read_split(Hdf5Data& d) {
    h5::Dataset ds = dataset("split", false);
    if (!ds) return;
    const Info i = info(ds, "split");
    if (i.type.type_class != H5T_INTEGER || i.dims.size() != 1 || static_cast<std::int64_t>(i.dims[0]) != n_)
      fail(fmt::format("/split has shape {}{}; expected {} integers (0 train, 1 evaluation, 2 neither), one per record",
                       shape_text(i.dims), i.type.type_class == H5T_INTEGER ? "" : " of floats", n_));
    const at::Tensor s = read_as(ds, "split", at::kLong);
    const auto* p = s.data_ptr<std::int64_t>();
    d.split.resize(static_cast<std::size_t>(n_));
    bool any_train = false;
    for (std::int64_t r = 0; r < n_; ++r) {
      if (p[r] < 0 || p[r] > 2)
        fail(fmt::format("/split[{}] = {}; use 0 (train), 1 (evaluation) or 2 (neither)", r, p[r]));
      d.split[static_cast<std::size_t>(r)] = static_cast<std::int8_t>(p[r]);
      any_train |= p[r] == 0;
    }
    if (!any_train) fail("/split marks no record as training (0); at least one is needed");
  }

  std::optional<std::int64_t> int_attribute(const std::string& name) {
    try {
      const auto v = h5::read_int_attribute(root_, name);
      return v ? std::optional<std::int64_t>(*v) : std::nullopt;
    } catch (const h5::Error&) {
      fail("the root attribute " + name + " must be a single integer");
    }
  }

  void read_attributes(Hdf5Data& d) {
    const auto classes = int_attribute("num_classes");
    const auto vocab = int_attribute("vocab_size");
    const auto pad = int_attribute("pad_token");
    if (d.modality != Modality::Tokens)
      for (const auto& [name, v] : {std::pair{"vocab_size", vocab}, std::pair{"pad_token", pad}})
        if (v)
          fail(std::string("the attribute ") + name + " is for token inputs, and /x holds floats (" +
               modality_name(d.modality) + "); remove it");

    if (d.multilabel) {
      d.num_classes = d.y.size(1);
      if (classes && *classes != d.num_classes)
        fail(fmt::format("the attribute num_classes = {} but /y has {} columns (one per label); make them agree",
                         *classes, d.num_classes));
    } else {
      const auto r = d.y.argmax().item<std::int64_t>();
      const auto largest = d.y[r].item<std::int64_t>();
      if (largest >= kMaxClasses)
        fail(fmt::format("/y[{}] = {}: class ids are 0 .. {} at most ({} classes); is /y the labels?", r, largest,
                         kMaxClasses - 1, kMaxClasses));
      if (classes) {
        if (*classes < 2) fail(fmt::format("the attribute num_classes = {}; a classification needs 2 or more", *classes));
        if (*classes > kMaxClasses)
          fail(fmt::format("the attribute num_classes = {}; at most {} classes are supported", *classes, kMaxClasses));
        if (largest >= *classes)
          fail(fmt::format("/y[{}] = {} is not below num_classes = {} (the file's attribute); class ids are 0 .. {}",
                           r, largest, *classes, *classes - 1));
        d.num_classes = *classes;
      } else {
        d.num_classes = largest + 1;
        if (d.num_classes < 2)
          fail("every label in /y is 0; a classification needs two classes or more");
      }
    }

    if (d.modality == Modality::Tokens) {
      const at::Tensor row_max = std::get<0>(d.x.max(1));
      const auto r = row_max.argmax().item<std::int64_t>();
      const auto largest = row_max[r].item<std::int64_t>();
      if (largest >= kMaxVocabulary) {
        const auto pos = d.x[r].argmax().item<std::int64_t>();
        fail(fmt::format("/x[{}, {}] = {} is out of any vocabulary: token ids are 0 .. {} at most (a vocabulary of "
                         "{}); is /x token ids?",
                         r, pos, largest, kMaxVocabulary - 1, kMaxVocabulary));
      }
      if (vocab) {
        if (*vocab < 1) fail(fmt::format("the attribute vocab_size = {}; it must be at least 1", *vocab));
        if (*vocab > kMaxVocabulary)
          fail(fmt::format("the attribute vocab_size = {}; at most {} token ids are supported", *vocab, kMaxVocabulary));
        if (largest >= *vocab) {
          const auto pos = d.x[r].argmax().item<std::int64_t>();
          fail(fmt::format("/x[{}, {}] = {} is not below vocab_size = {} (the file's attribute)", r, pos, largest,
                           *vocab));
        }
        d.vocab_size = *vocab;
      } else {
        d.vocab_size = largest + 1;
      }
      if (pad) {
        if (*pad < 0 || *pad >= d.vocab_size)
          fail(fmt::format("the attribute pad_token = {} is not a token id (0 .. {})", *pad, d.vocab_size - 1));
        d.pad_token = *pad;
      }
    }
  }

  std::string path_;
  h5::File file_;
  h5::Group root_;
  std::int64_t n_ = 0;
};

}  // namespace

Hdf5Data read_hdf5_data(const std::string& path) {
  h5::silence_error_printing();
  return Reader(path).read();
}

std::shared_ptr<const Hdf5Data> read_hdf5_data_cached(const std::string& path) {
  static FileCache<std::shared_ptr<const Hdf5Data>> cache([](const std::shared_ptr<const Hdf5Data>& d) {
    return static_cast<std::uint64_t>(d->x.nbytes() + d->y.nbytes() + d->split.size());
  });
  return cache.get(path, [](const std::string& p) { return std::make_shared<const Hdf5Data>(read_hdf5_data(p)); });
}

}  // namespace lrb
