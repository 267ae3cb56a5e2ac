#ifndef CAPPLAN_TESTS_TEST_COMMON_SVG_CHECK_H_
#define CAPPLAN_TESTS_TEST_COMMON_SVG_CHECK_H_

// Checks an SVG the way a reader's tools see it: Python's XML parser reads
// its structure, and rsvg-convert (Debian package librsvg2-bin) renders it
// to a PNG whose pixels Python decodes. Neither is optional: without
// /usr/bin/python3 or rsvg-convert the checks fail, naming what to install
// (scripts/test.sh installs both).

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::testing {

inline constexpr char kPython[] = "/usr/bin/python3";
inline constexpr char kMissingRsvg[] =
    "rsvg-convert not found: install the Debian package librsvg2-bin (scripts/test.sh installs "
    "it); the SVG plots cannot be checked by rendering without it";
inline constexpr char kMissingPython[] =
    "/usr/bin/python3 not found: install python3; the SVG cannot be parsed without it";

// rsvg-convert on PATH (as `command -v` finds it).
inline bool HaveRsvgConvert() {
  return std::system("command -v rsvg-convert >/dev/null 2>&1") == 0;
}
inline bool HavePython() { return access(kPython, X_OK) == 0; }

inline std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// One element of the document as Python's ElementTree reads it.
struct SvgElement {
  std::string tag;  // without the namespace: "rect", "text"
  std::vector<std::pair<std::string, std::string>> attributes;
  std::string text;
  std::string Attribute(const std::string& name) const {
    for (const auto& [k, v] : attributes) {
      if (k == name) return v;
    }
    return "";
  }
  double Number(const std::string& name) const {
    double v = 0;
    return absl::SimpleAtod(Attribute(name), &v) ? v : -1e300;
  }
};

// Every element in document order; empty when the document does not parse
// (the parser's message goes to `error`).
inline std::vector<SvgElement> ParseSvg(const std::string& svg, std::string* error) {
  TempDir dir;
  dir.Write("plot.svg", svg);
  // One element per line: tag, then key\x1fvalue pairs and the text, fields
  // separated by \x1e; newlines inside values are escaped.
  dir.Write("dump.py",
            "import sys, xml.etree.ElementTree as E\n"
            "root = E.parse(sys.argv[1]).getroot()\n"
            "esc = lambda s: (s or '').replace('\\\\', '\\\\\\\\').replace('\\n', '\\\\n')\n"
            "with open(sys.argv[2], 'w', encoding='utf-8') as out:\n"
            "  for e in root.iter():\n"
            "    tag = e.tag.split('}')[-1]\n"
            "    fields = [tag] + [k + '\\x1f' + esc(v) for k, v in e.attrib.items()]\n"
            "    out.write('\\x1e'.join(fields + ['#text\\x1f' + esc(e.text)]) + '\\n')\n");
  const std::string command = absl::StrCat(
      kPython, " ", (dir.path() / "dump.py").string(), " ", (dir.path() / "plot.svg").string(), " ",
      (dir.path() / "dump.txt").string(), " 2>", (dir.path() / "err.txt").string());
  std::vector<SvgElement> out;
  if (std::system(command.c_str()) != 0) {
    *error = ReadAll(dir.path() / "err.txt");
    return out;
  }
  for (absl::string_view line :
       absl::StrSplit(ReadAll(dir.path() / "dump.txt"), '\n', absl::SkipEmpty())) {
    std::vector<std::string> fields = absl::StrSplit(line, '\x1e');
    SvgElement e;
    e.tag = fields[0];
    for (size_t i = 1; i < fields.size(); ++i) {
      std::vector<std::string> kv = absl::StrSplit(fields[i], absl::MaxSplits('\x1f', 1));
      if (kv.size() != 2) continue;
      if (kv[0] == "#text") {
        e.text = kv[1];
      } else {
        e.attributes.emplace_back(kv[0], kv[1]);
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

// What rsvg-convert made of the SVG: its exit status, the PNG's size, and
// the bounding box of the pixels that are not white (the ink).
struct Rendering {
  bool ok = false;
  std::string error;
  int width = 0, height = 0;
  int ink_left = -1, ink_top = -1, ink_right = -1, ink_bottom = -1;  // inclusive; -1: none
};

// The PNG's signature and size from its IHDR chunk (bytes 16..23).
inline bool ReadPngSize(const std::string& png, int* width, int* height) {
  if (png.size() < 24 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 ||
      png.compare(12, 4, "IHDR") != 0) {
    return false;
  }
  auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(png[at + i]);
    return static_cast<int>(v);
  };
  *width = be32(16);
  *height = be32(20);
  return true;
}

// `measure_ink` decodes every pixel (slow in Python: keep such SVGs small).
inline Rendering RenderSvg(const std::string& svg, bool measure_ink = false) {
  Rendering r;
  TempDir dir;
  dir.Write("plot.svg", svg);
  const std::string png = (dir.path() / "plot.png").string();
  const std::string render =
      absl::StrCat("rsvg-convert -o ", png, " ", (dir.path() / "plot.svg").string(), " 2>",
                   (dir.path() / "err.txt").string());
  if (std::system(render.c_str()) != 0) {
    r.error = "rsvg-convert failed: " + ReadAll(dir.path() / "err.txt");
    return r;
  }
  if (!ReadPngSize(ReadAll(png), &r.width, &r.height)) {
    r.error = "rsvg-convert wrote no PNG";
    return r;
  }
  if (!measure_ink) {
    r.ok = true;
    return r;
  }
  // A PNG decoder in a few lines: IHDR, the zlib stream of IDAT, the five
  // row filters; RGB or RGBA at 8 bits per channel (what rsvg-convert writes).
  dir.Write(
      "ink.py",
      "import sys, struct, zlib\n"
      "d = open(sys.argv[1], 'rb').read()\n"
      "assert d[:8] == b'\\x89PNG\\r\\n\\x1a\\n', 'not a PNG'\n"
      "i, idat = 8, b''\n"
      "while i < len(d):\n"
      "  n, t = struct.unpack('>I4s', d[i:i+8]); body = d[i+8:i+8+n]; i += 12 + n\n"
      "  if t == b'IHDR': w, h, depth, ct = struct.unpack('>IIBB', body[:10])\n"
      "  if t == b'IDAT': idat += body\n"
      "assert depth == 8 and ct in (2, 6), (depth, ct)\n"
      "bpp = 3 if ct == 2 else 4\n"
      "raw = zlib.decompress(idat); stride = w * bpp; prev = bytearray(stride)\n"
      "box = [w, h, -1, -1]; p = 0\n"
      "for y in range(h):\n"
      "  f = raw[p]; line = bytearray(raw[p+1:p+1+stride]); p += 1 + stride\n"
      "  for x in range(stride):\n"
      "    a = line[x-bpp] if x >= bpp else 0; b = prev[x]; c = prev[x-bpp] if x >= bpp else 0\n"
      "    if f == 1: line[x] = (line[x] + a) & 255\n"
      "    elif f == 2: line[x] = (line[x] + b) & 255\n"
      "    elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255\n"
      "    elif f == 4:\n"
      "      q = a + b - c; pa, pb, pc = abs(q - a), abs(q - b), abs(q - c)\n"
      "      line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255\n"
      "  for x in range(w):\n"
      "    px = line[x*bpp:x*bpp+bpp]\n"
      "    alpha = px[3] if bpp == 4 else 255\n"
      "    if alpha > 0 and min(px[:3]) < 200:\n"
      "      box = [min(box[0], x), min(box[1], y), max(box[2], x), max(box[3], y)]\n"
      "  prev = line\n"
      "print(w, h, *box)\n");
  const std::string ink =
      absl::StrCat(kPython, " ", (dir.path() / "ink.py").string(), " ", png, " >",
                   (dir.path() / "ink.txt").string(), " 2>", (dir.path() / "err.txt").string());
  if (std::system(ink.c_str()) != 0) {
    r.error = "cannot decode the PNG: " + ReadAll(dir.path() / "err.txt");
    return r;
  }
  std::vector<std::string> f =
      absl::StrSplit(ReadAll(dir.path() / "ink.txt"), absl::ByAnyChar(" \n"), absl::SkipEmpty());
  if (f.size() != 6) {
    r.error = "unexpected decoder output";
    return r;
  }
  int* fields[] = {&r.width, &r.height, &r.ink_left, &r.ink_top, &r.ink_right, &r.ink_bottom};
  for (size_t i = 0; i < 6; ++i) {
    if (!absl::SimpleAtoi(f[i], fields[i])) r.error = "unexpected decoder output";
  }
  if (r.ink_right < 0) r.ink_left = r.ink_top = -1;
  r.ok = r.error.empty();
  return r;
}

}  // namespace capplan::testing

#endif  // CAPPLAN_TESTS_TEST_COMMON_SVG_CHECK_H_
