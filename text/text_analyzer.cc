// Copyright 2026 The Sieve Authors.

#include "text/text_analyzer.h"

#include <libstemmer.h>
#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>

namespace sieve {

namespace {

// The stop words of "english": the classic English list of Lucene's StandardAnalyzer and
// EnglishAnalyzer (33 words), ascending.
const std::vector<std::string_view> kEnglishStopWords = {
    "a",   "an",    "and",  "are",   "as",    "at",   "be",   "but", "by",  "for",  "if",
    "in",  "into",  "is",   "it",    "no",    "not",  "of",   "on",  "or",  "such", "that",
    "the", "their", "then", "there", "these", "they", "this", "to",  "was", "will", "with"};

bool IsEnglishStopWord(std::string_view word) {
  return std::binary_search(kEnglishStopWords.begin(), kEnglishStopWords.end(), word);
}

bool StemmerExists(const std::string& algorithm) {
  for (const char** name = sb_stemmer_list(); *name != nullptr; ++name) {
    if (algorithm == *name) return true;
  }
  return false;
}

std::string AcceptedNames() {
  std::string s = "'english', 'simple' or 'stem:<language>' with <language> one of";
  for (const std::string& lang : TextAnalyzer::StemLanguages()) s += " " + lang;
  return s;
}

// Stems a worker remembers (Worker::stems): a few MiB at most, and more distinct words than
// most collections' queries use.
constexpr size_t kMaxStems = 1 << 16;

}  // namespace

// What one Analyze call needs for itself: ICU's break iterator and Snowball's stemmer keep
// state between calls and are not thread-safe.
struct TextAnalyzer::Worker {
  std::unique_ptr<icu::BreakIterator> words;
  icu::UnicodeString text;   // what `words` iterates over
  icu::UnicodeString empty;  // what it iterates over while a long text's buffer is given back
  sb_stemmer* stemmer = nullptr;
  // Stems of the words this worker stemmed before (Snowball's stem is a function of the word
  // alone, and costs several times a lookup): emptied when it reaches kMaxStems.
  std::unordered_map<std::string, std::string> stems;
  ~Worker() { sb_stemmer_delete(stemmer); }
};

struct TextAnalyzer::Pool {
  std::mutex mu;
  std::vector<std::unique_ptr<Worker>> idle;
};

TextAnalyzer::TextAnalyzer(std::string name, std::string stemmer, bool stop_words)
    : name_(std::move(name)),
      stemmer_(std::move(stemmer)),
      stop_words_(stop_words),
      pool_(std::make_unique<Pool>()) {}

TextAnalyzer::~TextAnalyzer() = default;

const std::vector<std::string_view>& TextAnalyzer::EnglishStopWords() { return kEnglishStopWords; }

std::vector<std::string> TextAnalyzer::StemLanguages() {
  std::vector<std::string> out;
  for (const char** name = sb_stemmer_list(); *name != nullptr; ++name) out.emplace_back(*name);
  std::sort(out.begin(), out.end());
  return out;
}

Status TextAnalyzer::Validate(std::string_view name) {
  std::shared_ptr<const TextAnalyzer> unused;
  return Get(name, &unused);
}

Status TextAnalyzer::Get(std::string_view name, std::shared_ptr<const TextAnalyzer>* out) {
  static std::mutex mu;
  // Analyzers are never destroyed: their names are few (the stemmers libstemmer has).
  static auto* made = new std::map<std::string, std::shared_ptr<const TextAnalyzer>, std::less<>>;
  std::lock_guard<std::mutex> lock(mu);
  auto it = made->find(name);
  if (it != made->end()) {
    *out = it->second;
    return Status::OK();
  }
  std::string stemmer;
  bool stop_words = false;
  if (name == "english") {
    stemmer = "english";
    stop_words = true;
  } else if (name == "simple") {
  } else if (name.substr(0, 5) == "stem:") {
    stemmer = std::string(name.substr(5));
    if (!StemmerExists(stemmer)) {
      return Status::InvalidArgument("unknown text analyzer '" + std::string(name) +
                                     "': no Snowball stemmer '" + stemmer + "' (expected " +
                                     AcceptedNames() + ")");
    }
  } else {
    return Status::InvalidArgument("unknown text analyzer '" + std::string(name) + "': expected " +
                                   AcceptedNames());
  }
  std::shared_ptr<const TextAnalyzer> analyzer(
      new TextAnalyzer(std::string(name), std::move(stemmer), stop_words));
  // One worker now, so that a setup failure is reported here rather than at the first text.
  std::unique_ptr<Worker> worker;
  SIEVE_RETURN_IF_ERROR(analyzer->Borrow(&worker));
  analyzer->Return(std::move(worker));
  made->emplace(std::string(name), analyzer);
  *out = std::move(analyzer);
  return Status::OK();
}

Status TextAnalyzer::Borrow(std::unique_ptr<Worker>* worker) const {
  {
    std::lock_guard<std::mutex> lock(pool_->mu);
    if (!pool_->idle.empty()) {
      *worker = std::move(pool_->idle.back());
      pool_->idle.pop_back();
      return Status::OK();
    }
  }
  auto w = std::make_unique<Worker>();
  UErrorCode err = U_ZERO_ERROR;
  w->words.reset(icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), err));
  if (U_FAILURE(err) || w->words == nullptr) {
    return Status::Internal(std::string("text analyzer '") + name_ +
                            "': ICU cannot make a word break iterator: " + u_errorName(err));
  }
  if (!stemmer_.empty()) {
    w->stemmer = sb_stemmer_new(stemmer_.c_str(), "UTF_8");
    if (w->stemmer == nullptr) {
      return Status::Internal("text analyzer '" + name_ + "': cannot make the Snowball stemmer '" +
                              stemmer_ + "'");
    }
  }
  *worker = std::move(w);
  return Status::OK();
}

void TextAnalyzer::Return(std::unique_ptr<Worker> worker) const {
  std::lock_guard<std::mutex> lock(pool_->mu);
  pool_->idle.push_back(std::move(worker));
}

Status TextAnalyzer::Analyze(std::string_view text, std::vector<TextToken>* out) const {
  out->clear();
  if (text.size() > kMaxTextBytes) {
    return Status::InvalidArgument("a text of " + std::to_string(text.size()) +
                                   " bytes is longer than the " + std::to_string(kMaxTextBytes) +
                                   " bytes one text may hold");
  }
  if (text.empty()) return Status::OK();
  std::unique_ptr<Worker> worker;
  SIEVE_RETURN_IF_ERROR(Borrow(&worker));
  uint32_t position = 0;
  std::string folded;
  // Steps 4 to 6 for one word, case-folded into `folded`.
  auto add = [&]() -> Status {
    const uint32_t at = position++;
    if (folded.empty() || folded.size() > kMaxTermBytes) return Status::OK();  // step 4
    if (stop_words_ && IsEnglishStopWord(folded)) return Status::OK();         // step 5
    if (worker->stemmer != nullptr) {                                          // step 6
      auto cached = worker->stems.find(folded);
      if (cached != worker->stems.end()) {
        out->push_back(TextToken{cached->second, at});
        return Status::OK();
      }
      const std::string word_folded = folded;
      const sb_symbol* stem =
          sb_stemmer_stem(worker->stemmer, reinterpret_cast<const sb_symbol*>(folded.data()),
                          static_cast<int>(folded.size()));
      if (stem == nullptr) {
        return Status::ResourceExhausted("text analyzer '" + name_ +
                                         "': the stemmer ran out of memory");
      }
      const int n = sb_stemmer_length(worker->stemmer);
      if (n > 0) folded.assign(reinterpret_cast<const char*>(stem), static_cast<size_t>(n));
      if (worker->stems.size() >= kMaxStems) worker->stems.clear();
      worker->stems.emplace(word_folded, folded);
    }
    out->push_back(TextToken{folded, at});
    return Status::OK();
  };
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (std::all_of(text.begin(), text.end(), [&](char c) { return c == ' ' || letter(c); })) {
    // ASCII letters and spaces only (most queries): the words are the runs of letters, as
    // ICU's rules make them (UAX #29: WB5 keeps letters together, WB999 breaks at a space,
    // runs of spaces are no word), found without decoding the text for ICU.
    Status s;
    for (size_t i = 0; i < text.size() && s.ok();) {
      if (text[i] == ' ') {
        ++i;
        continue;
      }
      folded.clear();
      for (; i < text.size() && text[i] != ' '; ++i) {
        const char c = text[i];
        folded.push_back(c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
      }
      s = add();
    }
    Return(std::move(worker));
    return s;
  }
  // Ill-formed UTF-8 becomes U+FFFD (step 1).
  // The break iterator reads the text it is given in place: the worker holds it as long.
  icu::UnicodeString& u = worker->text;
  u = icu::UnicodeString::fromUTF8(
      icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  if (u.isBogus()) {
    Return(std::move(worker));
    return Status::ResourceExhausted("text analyzer: out of memory decoding a text of " +
                                     std::to_string(text.size()) + " bytes");
  }
  icu::BreakIterator& words = *worker->words;
  words.setText(u);
  icu::UnicodeString word;
  Status s;
  for (int32_t start = words.first(), end = words.next(); end != icu::BreakIterator::DONE;
       start = end, end = words.next()) {
    if (words.getRuleStatus() < UBRK_WORD_NONE_LIMIT) continue;  // not a word (step 2)
    folded.clear();
    const UChar* base = static_cast<const icu::UnicodeString&>(u).getBuffer();
    const UChar* chars = base == nullptr ? nullptr : base + start;
    const int32_t length = end - start;
    bool ascii = chars != nullptr;
    for (int32_t i = 0; ascii && i < length; ++i) ascii = chars[i] < 0x80;
    if (ascii) {
      // Case folding maps only A-Z of ASCII, and leaves it ASCII (so UTF-8 as it is): the same
      // bytes as the ICU steps below, without them.
      for (int32_t i = 0; i < length; ++i) {
        const char c = static_cast<char>(chars[i]);
        folded.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
      }
    } else {
      word.setTo(u, start, length);
      word.foldCase(U_FOLD_CASE_DEFAULT);
      word.findAndReplace(icu::UnicodeString(static_cast<UChar>(0x2019)),
                          icu::UnicodeString(static_cast<UChar>(0x27)));
      word.toUTF8String(folded);
    }
    s = add();
    if (!s.ok()) break;
  }
  if (u.getCapacity() > (1 << 20)) {
    words.setText(worker->empty);
    u = icu::UnicodeString();
  }
  Return(std::move(worker));
  return s;
}

}  // namespace sieve
