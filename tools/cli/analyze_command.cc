// Copyright 2026 The Sieve Authors.
//
// `sieve analyze`: the terms a text analyzer makes of a text (sieve::AnalyzeText).

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sieve/text.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/commands.h"
#include "tools/cli/flags.h"

namespace sieve::cli {

namespace {

const char kAnalyzeUsage[] =
    "usage: sieve analyze [--analyzer NAME] TEXT...\n"
    "       sieve analyze [--analyzer NAME] --file PATH   (PATH '-': standard input)\n"
    "  The terms a text attribute's value (or a MATCH, MATCH_ALL or PHRASE text) becomes in\n"
    "  the inverted index and in BM25, with their word positions. The TEXT arguments are\n"
    "  joined by single spaces; --file reads the text (UTF-8) from a file instead. Needs no\n"
    "  database.\n"
    "  --analyzer: english (default: stop words dropped, Porter2 stems), simple (case folded\n"
    "    words), or stem:LANGUAGE (a Snowball stemmer, no stop words)\n"
    "  stdout: {\"analyzer\": NAME, \"terms\": [\"term\", ...], \"positions\": [0, ...]}\n";

Status ReadText(const std::string& path, std::string* text) {
  if (path == "-") {
    text->assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (std::cin.bad()) return Status::IOError("standard input: cannot be read");
    return Status::OK();
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::IOError("--file " + path + ": is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("--file " + path + ": " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return Status::IOError("--file " + path + ": cannot be read");
  *text = buf.str();
  return Status::OK();
}

}  // namespace

int Analyze(const Args& args) {
  Flags flags({"analyzer", "file"}, {});
  flags.set_max_positional(args.size());
  Status s = flags.Parse(args);
  if (flags.help()) {
    std::fputs(kAnalyzeUsage, stdout);
    return 0;
  }
  if (s.ok() && flags.Has("file") && !flags.positional().empty()) {
    s = Status::InvalidArgument("give the text as arguments or as --file, not both");
  }
  if (s.ok() && !flags.Has("file") && flags.positional().empty()) {
    s = Status::InvalidArgument("missing the text (TEXT... or --file PATH)");
  }
  if (!s.ok()) {
    std::fprintf(stderr, "sieve analyze: %s (see sieve analyze --help)\n", s.message().c_str());
    return 1;
  }
  std::string text;
  if (flags.Has("file")) {
    s = ReadText(flags.Get("file"), &text);
  } else {
    for (const std::string& word : flags.positional()) {
      if (!text.empty()) text += ' ';
      text += word;
    }
  }
  const std::string analyzer = flags.Get("analyzer", DefaultTextAnalyzer());
  std::vector<std::string> terms;
  std::vector<uint32_t> positions;
  if (s.ok()) s = AnalyzeText(analyzer, text, &terms, &positions);
  if (!s.ok()) return Fail("analyze", s);
  nlohmann::ordered_json out = {{"analyzer", analyzer}, {"terms", terms}, {"positions", positions}};
  // Invalid UTF-8 in the input became U+FFFD in the terms, so the dump cannot throw.
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

}  // namespace sieve::cli
