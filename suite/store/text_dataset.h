#pragma once
// Text (JSON, a status, an error message) as a dataset of one fixed-length UTF-8 string in a
// Fletcher32-checked chunk (h5::write_string_dataset), carrying the sha256 of the text as an
// attribute: the chunk checksum catches a damaged chunk, the sha256 checks the text end to
// end (what was meant to be written is what is read).
#include <stdexcept>
#include <string>

#include "suite/hdf5/h5.h"

namespace lrb {

// What makes stored data untrustworthy, as a reason for the user ("sha256 mismatch in /spec").
class BadData : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The reason a validating reader gives for an exception it caught: BadData's own text, or
// "unreadable: ..." with HDF5's error stack for an h5::Error.
std::string validation_reason(const std::exception& e);

void write_text_dataset(const h5::Object& loc, const std::string& name, const std::string& text);
// Throws BadData naming `shown_as` (how the dataset is named in reasons, e.g. "/spec") when
// the dataset is missing, not a checksummed string, damaged ("checksum error in /spec"),
// without a sha256, or its text does not match it.
std::string read_text_dataset(const h5::Object& loc, const std::string& name, const std::string& shown_as);

}  // namespace lrb
