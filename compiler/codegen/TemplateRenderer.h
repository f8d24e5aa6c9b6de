//===- TemplateRenderer.h - The placeholder language of codegen_templates -===//
//
// kiln-codegen writes its outputs by rendering the files in codegen_templates/
// with values computed from the variants' metadata. The template language is
// a small subset of Mustache, enough to repeat blocks without putting C++
// syntax in the generator:
//
//   {{name}}                 the value of `name`, inserted verbatim
//   {{#name}} ... {{/name}}  the text between, once per item of the list
//                            `name`; inside, names resolve in the item first,
//                            then in the enclosing items, then at the top
//   {{^name}} ... {{/name}}  the text between, once, if the list is empty
//   ## (at a line's start)   a template comment: the whole line is dropped
//
// A line holding nothing but one block tag ({{#..}}, {{^..}}, {{/..}}) and
// blanks is dropped with its newline, so block tags can sit on lines of their
// own. A '{' right before "{{" or a '}' right after "}}" is plain text, so
// "{{{x}}}" is a value in braces. Every name must be defined and used as what
// it is (a text or a list): a misspelt name is an error, never an empty
// string.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_TEMPLATERENDERER_H
#define KILN_CODEGEN_TEMPLATERENDERER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::codegen {

class TemplateDict;

/// A template value: a text, or a list of dictionaries to repeat a block over.
struct TemplateValue {
  bool isList = false;
  std::string text;
  std::vector<TemplateDict> items;
};

/// The names a template (or one item of a repeated block) can refer to.
class TemplateDict {
public:
  /// Sets `name` to a text.
  TemplateDict &set(llvm::StringRef name, std::string text);
  /// Sets `name` to a list of items.
  TemplateDict &setList(llvm::StringRef name, std::vector<TemplateDict> items);
  /// Sets `name` to a list of one empty item when `flag` holds, else to an
  /// empty list: `{{#name}}` then renders its block only when `flag` holds.
  TemplateDict &setFlag(llvm::StringRef name, bool flag);
  /// The value of `name` in this dictionary alone, or null.
  const TemplateValue *find(llvm::StringRef name) const;

private:
  std::map<std::string, TemplateValue, std::less<>> values;
};

/// Renders `templateText` with the names of `root`. `templateName` only
/// labels errors, which say "NAME:LINE: message".
llvm::Expected<std::string> renderTemplate(llvm::StringRef templateText,
                                           const TemplateDict &root,
                                           llvm::StringRef templateName);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_TEMPLATERENDERER_H
