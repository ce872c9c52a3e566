// Copyright 2026 The Sieve Authors.
//
// The text analyzers of `text` attributes, callable on their own: AnalyzeText gives the terms a
// text attribute's value (or a MATCH, MATCH_ALL or PHRASE predicate's text) becomes in the
// inverted index, so that an application, a test oracle or another engine (bm25s, Tantivy)
// can work on exactly the tokens Sieve indexes and BM25 scores.
//
//   std::vector<std::string> terms;
//   Status s = sieve::AnalyzeText("english", "The runners were running", &terms);
//   // terms == {"runner", "were", "run"}; positions {1, 2, 3} ("the" is a stop word)
//
// The analyzers ("english", the default; "simple"; "stem:<language>") and their steps are
// documented in docs/filter-language.md#text-analyzers. The output depends only on the
// analyzer name, the text, and the ICU and Snowball versions the library was built with.
//
// Thread-safety: AnalyzeText may be called concurrently from any number of threads.

#ifndef SIEVE_INCLUDE_SIEVE_TEXT_H_
#define SIEVE_INCLUDE_SIEVE_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sieve/status.h"

namespace sieve {

// Replaces *terms with the terms of `text` under the analyzer called `analyzer`, in text
// order, and, when `positions` is not null, *positions with each term's position: its word's
// index among the text's words. Positions ascend; a gap is a word the analyzer dropped (a stop
// word, or a word longer than 255 bytes). The document length BM25 uses is terms->size().
// `text` must be UTF-8 (an ill-formed sequence analyzes as U+FFFD).
//
// REQUIRES: terms != nullptr.
// Returns InvalidArgument naming the accepted analyzers when there is no analyzer called
// `analyzer`, or when `text` is longer than 64 MiB; Internal when ICU or the stemmer fails.
// On error *terms and *positions are left empty.
Status AnalyzeText(std::string_view analyzer, std::string_view text,
                   std::vector<std::string>* terms, std::vector<uint32_t>* positions = nullptr);

// The analyzer a text attribute gets when its spec names none: "english".
std::string DefaultTextAnalyzer();

}  // namespace sieve

#endif  // SIEVE_INCLUDE_SIEVE_TEXT_H_
