#include "workloads/tasks/image_files.h"

#include <ATen/ATen.h>

#include <cmath>
#include <numeric>

#include "suite/core/errors.h"
#include "suite/core/shape_text.h"
#include "workloads/loaders/idx.h"
#include "workloads/tasks/common.h"

namespace lrb {
namespace {

struct Shape {
  std::int64_t n, c, h, w;
  std::uint8_t type;
};

Shape image_shape(const std::string& path, const std::string& view) {
  const IdxHeader h = read_idx_header(path);
  Shape s{};
  s.type = h.type;
  if (h.dims.size() == 3) s = {h.dims[0], 1, h.dims[1], h.dims[2], h.type};
  else if (h.dims.size() == 4) s = {h.dims[0], h.dims[1], h.dims[2], h.dims[3], h.type};
  else
    throw UserError(path + ": holds a " + shape_text(h.dims) + " array; image files must be [n, H, W] or [n, C, H, W]");
  if (s.n == 0 || s.c == 0 || s.h == 0 || s.w == 0) throw UserError(path + ": holds no images (" + shape_text(h.dims) + ")");
  if (view == "sequence" && h.type != 0x08)
    throw UserError(path + ": view \"sequence\" needs unsigned-byte pixels (idx type 8) to use them as tokens 0-255; "
                    "use view = \"grid\" for other element types");
  return s;
}

// Labels [n] as int64, checked for count and range.
at::Tensor load_labels(const std::string& path, std::int64_t n, const std::string& images_path,
                       std::int64_t num_classes) {
  const at::Tensor raw = read_idx_cached(path);
  if (raw.dim() != 1)
    throw UserError(path + ": holds a " + shape_text(raw.sizes()) + " array; a labels file must be one-dimensional [n]");
  if (!at::isIntegralType(raw.scalar_type(), false))
    throw UserError(path + ": labels must be integers (idx types 8, 9, 11 or 12)");
  if (raw.size(0) != n)
    throw UserError(path + ": has " + std::to_string(raw.size(0)) + " labels but " + images_path + " has " +
                    std::to_string(n) + " images; the two files must match record for record");
  const at::Tensor y = raw.to(at::kLong);
  if (num_classes > 0) {
    const auto bad = (y.lt(0) | y.ge(num_classes)).nonzero();
    if (bad.size(0) > 0) {
      const auto i = bad[0][0].item<std::int64_t>();
      throw UserError(path + ": record " + std::to_string(i) + " has label " + std::to_string(y[i].item<std::int64_t>()) +
                      ", outside 0.." + std::to_string(num_classes - 1) + " (num_classes " +
                      std::to_string(num_classes) + "); fix the file or raise num_classes");
    }
  } else if (y.numel() > 0 && y.min().item<std::int64_t>() < 0) {
    const auto i = y.lt(0).nonzero()[0][0].item<std::int64_t>();
    throw UserError(path + ": record " + std::to_string(i) + " has a negative label; labels are class ids from 0");
  }
  return y;
}

std::int64_t classes_of(const ImageFileParams& p, std::int64_t n) {
  if (p.num_classes > 0) return p.num_classes;
  return load_labels(p.train_labels, n, p.train_images, 0).max().item<std::int64_t>() + 1;
}

bool splitting(const ImageFileParams& p) { return p.eval_images.empty(); }

void check_pair(const ImageFileParams& p) {
  if (p.eval_images.empty() != p.eval_labels.empty())
    throw UserError(p.task + ": give both eval_images and eval_labels, or neither (then eval_fraction of the "
                    "training file is held out)");
}

// The uint8 or float images [n, C, H, W] of a file.
at::Tensor load_images(const std::string& path, const Shape& s) {
  return read_idx_cached(path).reshape({s.n, s.c, s.h, s.w});
}

at::Tensor to_view(const at::Tensor& images, const ImageFileParams& p, const std::vector<std::int64_t>& perm) {
  at::Tensor x = images;
  if (p.permute) {
    const auto idx = at::tensor(perm, at::kLong);
    x = x.reshape({x.size(0), x.size(1), x.size(2) * x.size(3)}).index_select(2, idx).reshape(x.sizes());
  }
  if (x.scalar_type() == at::kByte) return image_view(x.contiguous(), p.view);
  return x.to(at::kFloat).contiguous();
}

}  // namespace

std::vector<std::int64_t> pixel_permutation(std::int64_t pixels, std::uint64_t permute_seed) {
  std::vector<std::int64_t> perm(static_cast<std::size_t>(pixels));
  std::iota(perm.begin(), perm.end(), 0);
  Rng rng(derive_seed(permute_seed, 0, "pixel-permutation"));
  portable_shuffle(perm, rng);
  return perm;
}

TaskInfo describe_image_files(const ImageFileParams& p, std::vector<std::string> metrics) {
  check_pair(p);
  const Shape tr = image_shape(p.train_images, p.view);
  // The whole file, not only its header: a truncated file, trailing bytes or a non-finite
  // pixel stops the sweep here (validate), not in the middle of a run.
  verify_idx(p.train_images);
  const std::int64_t classes = classes_of(p, tr.n);
  load_labels(p.train_labels, tr.n, p.train_images, classes);
  std::int64_t train_pool = tr.n;
  if (!splitting(p)) {
    const Shape ev = image_shape(p.eval_images, p.view);
    verify_idx(p.eval_images);
    if (ev.c != tr.c || ev.h != tr.h || ev.w != tr.w)
      throw UserError(p.eval_images + ": images are " + std::to_string(ev.c) + "x" + std::to_string(ev.h) + "x" +
                      std::to_string(ev.w) + " but the training images (" + p.train_images + ") are " +
                      std::to_string(tr.c) + "x" + std::to_string(tr.h) + "x" + std::to_string(tr.w));
    load_labels(p.eval_labels, ev.n, p.eval_images, classes);
  } else {
    train_pool = tr.n - static_cast<std::int64_t>(std::llround(p.eval_fraction * tr.n));
  }
  if (p.train_size > train_pool)
    throw UserError(p.task + ": train_size " + std::to_string(p.train_size) + " is more than the " +
                    std::to_string(train_pool) + " training records of " + p.train_images);
  if (classes < 2) throw UserError(p.train_labels + ": every label is 0; a classification task needs two classes or more");
  TaskInfo info = image_info(p.view, tr.c, tr.h, tr.w, classes, std::move(metrics));
  return info;
}

TaskData generate_image_files(const ImageFileParams& p, const DataRequest& req) {
  check_pair(p);
  const Shape tr = image_shape(p.train_images, p.view);
  const std::int64_t classes = classes_of(p, tr.n);
  const at::Tensor train_x = load_images(p.train_images, tr);
  const at::Tensor train_y = load_labels(p.train_labels, tr.n, p.train_images, classes);
  const std::vector<std::int64_t> perm = p.permute ? pixel_permutation(tr.h * tr.w, p.permute_seed)
                                                   : std::vector<std::int64_t>{};

  std::vector<std::int64_t> pool(static_cast<std::size_t>(tr.n));
  std::iota(pool.begin(), pool.end(), 0);
  at::Tensor eval_x, eval_y;
  std::vector<std::int64_t> eval_index;
  if (splitting(p)) {
    Rng split_rng(derive_seed(p.split_seed, 0, "holdout"));
    portable_shuffle(pool, split_rng);
    const auto held = static_cast<std::size_t>(std::llround(p.eval_fraction * tr.n));
    eval_index.assign(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(held));
    pool.erase(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(held));
    eval_x = train_x;
    eval_y = train_y;
  } else {
    const Shape ev = image_shape(p.eval_images, p.view);
    eval_x = load_images(p.eval_images, ev);
    eval_y = load_labels(p.eval_labels, ev.n, p.eval_images, classes);
    eval_index.resize(static_cast<std::size_t>(ev.n));
    std::iota(eval_index.begin(), eval_index.end(), 0);
  }
  if (req.eval_size > static_cast<std::int64_t>(eval_index.size()))
    throw UserError(p.task + ": eval_size " + std::to_string(req.eval_size) + " is more than the " +
                    std::to_string(eval_index.size()) + " evaluation records available; lower [train] eval_size" +
                    (splitting(p) ? " or raise eval_fraction" : ""));
  eval_index.resize(static_cast<std::size_t>(req.eval_size));

  const std::int64_t n_train = p.train_size > 0 ? p.train_size : static_cast<std::int64_t>(pool.size());
  if (n_train > static_cast<std::int64_t>(pool.size()))
    throw UserError(p.task + ": train_size " + std::to_string(n_train) + " is more than the " +
                    std::to_string(pool.size()) + " training records of " + p.train_images);
  // The run seed chooses the training subset and its order.
  Rng order(req.seed);
  portable_shuffle(pool, order);
  pool.resize(static_cast<std::size_t>(n_train));

  TaskData d;
  d.train = {to_view(take_rows(train_x, pool), p, perm), take_rows(train_y, pool)};
  d.eval = {to_view(take_rows(eval_x, eval_index), p, perm), take_rows(eval_y, eval_index)};
  return d;
}

}  // namespace lrb
