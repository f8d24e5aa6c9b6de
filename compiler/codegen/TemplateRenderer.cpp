//===- TemplateRenderer.cpp - The placeholder language of codegen_templates
//===//

#include "TemplateRenderer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace kiln::codegen {

TemplateDict &TemplateDict::set(StringRef name, std::string text) {
  TemplateValue &value = values[name.str()];
  value.isList = false;
  value.text = std::move(text);
  value.items.clear();
  return *this;
}

TemplateDict &TemplateDict::setList(StringRef name,
                                    std::vector<TemplateDict> items) {
  TemplateValue &value = values[name.str()];
  value.isList = true;
  value.text.clear();
  value.items = std::move(items);
  return *this;
}

TemplateDict &TemplateDict::setFlag(StringRef name, bool flag) {
  std::vector<TemplateDict> items;
  if (flag)
    items.emplace_back();
  return setList(name, std::move(items));
}

const TemplateValue *TemplateDict::find(StringRef name) const {
  auto it = values.find(name);
  return it == values.end() ? nullptr : &it->second;
}

namespace {

struct Node {
  enum Kind { Text, Variable, Section, Inverted };
  Kind kind;
  std::string text; // the text, or the name
  unsigned line;
  std::vector<Node> children;
};

/// Parses the template into a tree of nodes.
class Parser {
public:
  Parser(StringRef text, StringRef name) : name(name) {
    // Drop comment lines, remembering each kept line's number.
    unsigned number = 0;
    for (StringRef rest = text; !rest.empty();) {
      auto [line, tail] = rest.split('\n');
      bool hadNewline = line.size() < rest.size();
      ++number;
      rest = tail;
      if (line.starts_with("##"))
        continue;
      source += line;
      if (hadNewline)
        source += '\n';
      lineNumbers.push_back(number);
    }
  }

  Expected<std::vector<Node>> parse() {
    std::vector<Node> root;
    // The open sections, innermost last.
    SmallVector<std::vector<Node> *> stack = {&root};
    SmallVector<Node *> open;
    StringRef src = source;
    size_t pos = 0;
    while (pos < src.size()) {
      size_t tagStart = src.find("{{", pos);
      while (tagStart != StringRef::npos && tagStart + 2 < src.size() &&
             src[tagStart + 2] == '{')
        ++tagStart; // a literal '{' before the tag
      if (tagStart == StringRef::npos) {
        addText(*stack.back(), src.substr(pos), lineOf(pos));
        break;
      }
      size_t tagEnd = src.find("}}", tagStart + 2);
      if (tagEnd == StringRef::npos)
        return error(lineOf(tagStart), "'{{' without a closing '}}'");
      StringRef tag = src.slice(tagStart + 2, tagEnd).trim();
      size_t after = tagEnd + 2;
      unsigned line = lineOf(tagStart);
      if (tag.empty())
        return error(line, "empty tag '{{}}'");

      char sigil = tag.front();
      bool block = sigil == '#' || sigil == '^' || sigil == '/';
      StringRef tagName = block ? tag.drop_front().trim() : tag;
      if (!isName(tagName))
        return error(line, formatv("'{0}' is not a name (letters, digits "
                                   "and '_')",
                                   tagName));

      size_t textEnd = tagStart;
      if (block) {
        // A block tag alone on its line takes the line with it.
        size_t lineStart = src.rfind('\n', tagStart);
        lineStart = lineStart == StringRef::npos ? 0 : lineStart + 1;
        size_t lineEnd = src.find('\n', after);
        StringRef before = src.slice(lineStart, tagStart);
        StringRef behind = src.slice(after, lineEnd);
        if (lineStart >= pos && isBlank(before) && isBlank(behind)) {
          textEnd = lineStart;
          after = lineEnd == StringRef::npos ? src.size() : lineEnd + 1;
        }
      }
      addText(*stack.back(), src.slice(pos, textEnd), lineOf(pos));
      pos = after;

      if (sigil == '/') {
        if (open.empty())
          return error(line, "'{{/" + tagName + "}}' closes no block");
        if (open.back()->text != tagName)
          return error(line, "'{{/" + tagName + "}}' closes '" +
                                 open.back()->text + "', opened on line " +
                                 Twine(open.back()->line));
        open.pop_back();
        stack.pop_back();
        continue;
      }
      Node node;
      node.kind = sigil == '#'   ? Node::Section
                  : sigil == '^' ? Node::Inverted
                                 : Node::Variable;
      node.text = tagName.str();
      node.line = line;
      stack.back()->push_back(std::move(node));
      if (block) {
        open.push_back(&stack.back()->back());
        stack.push_back(&open.back()->children);
      }
    }
    if (!open.empty())
      return error(open.back()->line,
                   formatv("'{0}' is never closed", open.back()->text));
    return root;
  }

  Error error(unsigned line, const Twine &message) const {
    return createStringError(
        inconvertibleErrorCode(),
        formatv("{0}:{1}: {2}", name, line, message.str()).str());
  }

private:
  static bool isBlank(StringRef s) {
    return all_of(s, [](char c) { return c == ' ' || c == '\t'; });
  }
  static bool isName(StringRef s) {
    return !s.empty() &&
           all_of(s, [](char c) { return isAlnum(c) || c == '_'; });
  }
  static void addText(std::vector<Node> &nodes, StringRef text, unsigned line) {
    if (!text.empty())
      nodes.push_back(Node{Node::Text, text.str(), line, {}});
  }
  unsigned lineOf(size_t offset) const {
    size_t index = StringRef(source).take_front(offset).count('\n');
    return index < lineNumbers.size()
               ? lineNumbers[index]
               : (lineNumbers.empty() ? 1 : lineNumbers.back());
  }

  StringRef name;
  std::string source;
  std::vector<unsigned> lineNumbers;
};

class Renderer {
public:
  Renderer(const Parser &parser) : parser(parser) {}

  Error render(const std::vector<Node> &nodes,
               SmallVectorImpl<const TemplateDict *> &scopes,
               std::string &out) {
    for (const Node &node : nodes) {
      if (node.kind == Node::Text) {
        out += node.text;
        continue;
      }
      const TemplateValue *value = nullptr;
      for (const TemplateDict *scope : reverse(scopes))
        if ((value = scope->find(node.text)))
          break;
      if (!value)
        return parser.error(node.line,
                            formatv("'{0}' is not defined", node.text));
      if (node.kind == Node::Variable) {
        if (value->isList)
          return parser.error(node.line,
                              "'" + node.text + "' is a list: use it as {{#" +
                                  node.text + "}}...{{/" + node.text + "}}");
        out += value->text;
        continue;
      }
      if (!value->isList)
        return parser.error(node.line,
                            formatv("'{0}' is a text, not a list", node.text));
      if (node.kind == Node::Inverted) {
        if (value->items.empty())
          if (Error err = render(node.children, scopes, out))
            return err;
        continue;
      }
      for (const TemplateDict &item : value->items) {
        scopes.push_back(&item);
        Error err = render(node.children, scopes, out);
        scopes.pop_back();
        if (err)
          return err;
      }
    }
    return Error::success();
  }

private:
  const Parser &parser;
};

} // namespace

Expected<std::string> renderTemplate(StringRef templateText,
                                     const TemplateDict &root,
                                     StringRef templateName) {
  Parser parser(templateText, templateName);
  Expected<std::vector<Node>> nodes = parser.parse();
  if (!nodes)
    return nodes.takeError();
  std::string out;
  SmallVector<const TemplateDict *> scopes = {&root};
  if (Error err = Renderer(parser).render(*nodes, scopes, out))
    return std::move(err);
  return out;
}

} // namespace kiln::codegen
