#include "suite/store/text_dataset.h"

#include "suite/core/sha256.h"

namespace lrb {

namespace {
constexpr const char* kSha256Attr = "sha256";
}

void write_text_dataset(const h5::Object& loc, const std::string& name, const std::string& text) {
  h5::Dataset ds = h5::write_string_dataset(loc, name, text);
  h5::write_string_attribute(ds, kSha256Attr, sha256_hex(text));
}

std::string read_text_dataset(const h5::Object& loc, const std::string& name, const std::string& shown_as) {
  if (!h5::link_exists(loc, name)) throw BadData("missing " + shown_as);
  std::string text;
  std::optional<std::string> sha;
  try {
    h5::Dataset ds = h5::open_dataset(loc, name);
    // Checked first: only a chunked, checksummed string is read (nothing from the global heap).
    if (!h5::has_fletcher32(ds)) throw BadData("no Fletcher32 checksum on " + shown_as);
    text = h5::read_string_dataset(ds);
    sha = h5::read_string_attribute(ds, kSha256Attr);
  } catch (const h5::Error& e) {
    if (e.is_checksum_failure()) throw BadData("checksum error in " + shown_as);
    throw BadData("cannot read " + shown_as + " (" + e.operation() + ": " + e.stack() + ")");
  }
  if (!sha) throw BadData("no sha256 attribute on " + shown_as);
  if (sha256_hex(text) != *sha) throw BadData("sha256 mismatch in " + shown_as);
  return text;
}

std::string validation_reason(const std::exception& e) {
  if (dynamic_cast<const BadData*>(&e)) return e.what();
  if (const auto* h = dynamic_cast<const h5::Error*>(&e))
    return "unreadable: " + h->operation() + " failed (" + h->stack() + ")";
  return std::string("unreadable: ") + e.what();
}

}  // namespace lrb
