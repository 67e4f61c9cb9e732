#pragma once
// Time-series classification files of the UCR/UEA archives:
//  - .ts (sktime): header lines (@problemName, @timeStamps, @univariate, @dimensions,
//    @equalLength, @seriesLength, @missing, @classLabel true <labels...>), then @data and
//    one case per line: dimensions separated by ':', values by ',', the label last
//    ("1.0,2.5,3.1:0.2,0.1,0.0:cat").
//  - .tsv (UCR 2018): one case per line, the label first, then the values, tab-separated.
// Every case must have the same length and number of dimensions. Problems are UserErrors
// naming the file and line and saying what to do.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lrb {

struct SeriesSet {
  std::string path;
  at::Tensor x;                          // [n, length, channels] float
  std::vector<std::string> labels;       // per case, as written
  std::vector<std::int64_t> lines;       // per case, its line number (for messages)
  std::vector<std::string> class_names;  // .ts: the @classLabel list, in order; .tsv: empty
};

SeriesSet read_ts(const std::string& path);
SeriesSet read_tsv(const std::string& path);
// By extension: .ts, or .tsv / .txt.
SeriesSet read_series_file(const std::string& path);
// read_series_file through a process-wide bounded cache (suite/core/file_cache.h) keyed by
// path, size and modification time. Treat the result as read-only.
std::shared_ptr<const SeriesSet> read_series_file_cached(const std::string& path);

// Class ids of the cases, by position in `classes`. UserError naming file and line for a
// label that is not among them.
std::vector<std::int64_t> label_ids(const SeriesSet& s, const std::vector<std::string>& classes);

// The classes of a .tsv training file: its distinct labels, in numeric order when all are
// numbers (UCR labels such as "-1", "1", "2"), else in text order.
std::vector<std::string> sorted_classes(const std::vector<std::string>& labels);

}  // namespace lrb
