// Copyright 2026 The Sieve Authors.
//
// TextAnalyzer turns the value of a `text` attribute (or the text of a MATCH, MATCH_ALL or
// PHRASE predicate) into the terms the inverted index holds. Every analyzer runs the same
// pipeline; the name says which optional steps it takes:
//
//   1. The UTF-8 text is decoded; an ill-formed sequence becomes U+FFFD.
//   2. ICU's word break iterator (root locale, Unicode UAX #29 word boundaries; dictionary
//      segmentation for Chinese, Japanese, Thai, ...) splits it. Only segments ICU tags as words
//      (rule status ≥ UBRK_WORD_NONE_LIMIT: numbers, letters, kana, ideographs) are kept;
//      spaces, punctuation and symbols are not. Each kept word takes the next position: 0, 1,
//      2, ... in text order.
//   3. Each word is case folded (Unicode full default case folding, u_strFoldCase), and the
//      right single quotation mark U+2019 becomes the apostrophe U+0027.
//   4. A word longer than kMaxTermBytes bytes (UTF-8) after folding is dropped (its position
//      stays taken).
//   5. "english" only: a folded word in EnglishStopWords() is dropped (its position stays
//      taken, so PHRASE keeps the distance between the words around it).
//   6. "english" and "stem:<language>": the Snowball stemmer of that language (libstemmer)
//      replaces the word by its stem.
//
//   "english"           steps 1-6 with Snowball's "english" (Porter2) stemmer. The default.
//   "simple"            steps 1-4: words case folded, nothing dropped, nothing stemmed.
//   "stem:<language>"   steps 1-4 and 6 with that Snowball stemmer, no stop words; <language>
//                       is a name StemLanguages() lists ("french", "german", "porter", ...).
//
// A token is (term, position). The document length BM25 uses is the number of tokens. The
// output depends only on the text, the analyzer name, and the Unicode data and Snowball
// algorithms of the ICU and libstemmer the build links (Debian 12: ICU 72, Snowball 2.2).
//
// Thread-safety: an analyzer is immutable and Analyze may run concurrently (each call borrows
// an ICU break iterator and a stemmer from the analyzer's pool). Analyzers live for the
// whole process; Get returns the same one for the same name.

#ifndef SIEVE_TEXT_TEXT_ANALYZER_H_
#define SIEVE_TEXT_TEXT_ANALYZER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sieve/status.h"

namespace sieve {

// The analyzer a text attribute gets when its spec names none.
inline constexpr char kDefaultTextAnalyzer[] = "english";
// Longest term kept, in UTF-8 bytes (step 4).
inline constexpr size_t kMaxTermBytes = 255;
// Longest text one call analyzes (a text attribute's value, a predicate's text): 64 MiB.
inline constexpr size_t kMaxTextBytes = size_t{64} << 20;

struct TextToken {
  std::string term;
  uint32_t position = 0;  // the word's index among the text's words (step 2)
  bool operator==(const TextToken&) const = default;
};

class TextAnalyzer {
 public:
  // The analyzer called `name`. InvalidArgument naming the accepted names when there is none
  // of that name; Internal when ICU or the stemmer cannot be set up.
  static Status Get(std::string_view name, std::shared_ptr<const TextAnalyzer>* out);
  // OK when Get(name) would succeed.
  static Status Validate(std::string_view name);
  // The Snowball algorithms "stem:<language>" accepts, sorted.
  static std::vector<std::string> StemLanguages();
  // The stop words of "english", ascending.
  static const std::vector<std::string_view>& EnglishStopWords();

  ~TextAnalyzer();
  TextAnalyzer(const TextAnalyzer&) = delete;
  TextAnalyzer& operator=(const TextAnalyzer&) = delete;

  const std::string& name() const { return name_; }
  bool stems() const { return !stemmer_.empty(); }
  bool drops_stop_words() const { return stop_words_; }

  // Replaces *out with the tokens of `text`, in position order. InvalidArgument when `text`
  // is longer than kMaxTextBytes; ResourceExhausted or Internal when ICU fails.
  Status Analyze(std::string_view text, std::vector<TextToken>* out) const;

 private:
  struct Worker;
  TextAnalyzer(std::string name, std::string stemmer, bool stop_words);
  Status Borrow(std::unique_ptr<Worker>* worker) const;
  void Return(std::unique_ptr<Worker> worker) const;

  const std::string name_;
  const std::string stemmer_;  // Snowball algorithm, or "" for none
  const bool stop_words_;
  struct Pool;
  const std::unique_ptr<Pool> pool_;
};

}  // namespace sieve

#endif  // SIEVE_TEXT_TEXT_ANALYZER_H_
