// Copyright 2026 The Sieve Authors.

#include <memory>

#include "sieve/text.h"
#include "text/text_analyzer.h"

namespace sieve {

Status AnalyzeText(std::string_view analyzer, std::string_view text,
                   std::vector<std::string>* terms, std::vector<uint32_t>* positions) {
  terms->clear();
  if (positions != nullptr) positions->clear();
  std::shared_ptr<const TextAnalyzer> a;
  SIEVE_RETURN_IF_ERROR(TextAnalyzer::Get(analyzer, &a));
  std::vector<TextToken> tokens;
  SIEVE_RETURN_IF_ERROR(a->Analyze(text, &tokens));
  terms->reserve(tokens.size());
  if (positions != nullptr) positions->reserve(tokens.size());
  for (TextToken& t : tokens) {
    terms->push_back(std::move(t.term));
    if (positions != nullptr) positions->push_back(t.position);
  }
  return Status::OK();
}

std::string DefaultTextAnalyzer() { return kDefaultTextAnalyzer; }

}  // namespace sieve
