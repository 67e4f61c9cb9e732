#pragma once
// A saved TorchScript module is a zip archive whose records are stored uncompressed, each
// with a CRC-32 in its headers; LibTorch's reader does not check them (its miniz is built
// with the checks off), so a flipped byte in a weight or in the code would load unseen.
#include <string>
#include <string_view>

namespace lrb {

// Why `bytes` is not an intact zip archive ("" when every record's CRC-32 matches and every
// header lies inside the file): a missing end record, a header or record outside the file,
// a CRC mismatch (naming the record). Zip64 archives (above 4 GiB) are read too.
std::string zip_damage(std::string_view bytes);

}  // namespace lrb
