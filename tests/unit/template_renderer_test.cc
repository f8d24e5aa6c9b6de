#include "TemplateRenderer.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::codegen {
namespace {

using ::testing::HasSubstr;

std::string Render(const std::string &text, const TemplateDict &root) {
  llvm::Expected<std::string> out = renderTemplate(text, root, "t.tmpl");
  if (!out)
    return "ERROR: " + llvm::toString(out.takeError());
  return *out;
}

TemplateDict Items(std::vector<std::string> names) {
  std::vector<TemplateDict> items;
  for (const std::string &name : names) {
    items.emplace_back();
    items.back().set("item", name);
  }
  TemplateDict root;
  root.setList("items", std::move(items));
  root.set("sep", ",");
  return root;
}

TEST(TemplateRenderer, SubstitutesNames) {
  TemplateDict root;
  root.set("a", "x").set("b", "y");
  EXPECT_EQ(Render("[{{a}}] [{{ b }}] {{a}}{{b}}", root), "[x] [y] xy");
}

TEST(TemplateRenderer, RepeatsSectionsAndLooksOutwards) {
  EXPECT_EQ(Render("{{#items}}{{item}}{{sep}}{{/items}}", Items({"p", "q"})),
            "p,q,");
  EXPECT_EQ(Render("{{#items}}{{item}}{{/items}}", Items({})), "");
}

TEST(TemplateRenderer, InvertedSections) {
  EXPECT_EQ(Render("{{^items}}none{{/items}}", Items({})), "none");
  EXPECT_EQ(Render("{{^items}}none{{/items}}", Items({"p"})), "");
}

TEST(TemplateRenderer, Flags) {
  TemplateDict root;
  root.setFlag("yes", true).setFlag("no", false);
  EXPECT_EQ(Render("{{#yes}}Y{{/yes}}{{#no}}N{{/no}}{{^no}}n{{/no}}", root),
            "Yn");
}

TEST(TemplateRenderer, NestedSections) {
  std::vector<TemplateDict> outer(2);
  outer[0]
      .set("name", "a")
      .setList("inner",
               {TemplateDict().set("v", "1"), TemplateDict().set("v", "2")});
  outer[1].set("name", "b").setList("inner", {TemplateDict().set("v", "3")});
  TemplateDict root;
  root.setList("outer", outer);
  EXPECT_EQ(
      Render("{{#outer}}{{#inner}}{{name}}{{v}} {{/inner}}{{/outer}}", root),
      "a1 a2 b3 ");
}

TEST(TemplateRenderer, BlockTagsAloneOnALineTakeTheLine) {
  const std::string text = "begin\n"
                           "  {{#items}}\n"
                           "- {{item}}\n"
                           "  {{/items}}\n"
                           "end\n";
  EXPECT_EQ(Render(text, Items({"p", "q"})), "begin\n- p\n- q\nend\n");
}

TEST(TemplateRenderer, InlineBlockTagsKeepTheLine) {
  EXPECT_EQ(Render("a {{#items}}{{item}}{{/items}} b\n", Items({"p"})),
            "a p b\n");
}

TEST(TemplateRenderer, CommentLinesAreDropped) {
  TemplateDict root;
  root.set("a", "x");
  EXPECT_EQ(
      Render("## a comment with {{undefined}} names\n{{a}}\n## end", root),
      "x\n");
}

TEST(TemplateRenderer, BracesNextToTagsAreText) {
  TemplateDict root;
  root.set("a", "x");
  EXPECT_EQ(Render("{{{a}}, {b}}}", root), "{x, {b}}}");
  EXPECT_EQ(Render("{{{a}}}", root), "{x}");
}

TEST(TemplateRenderer, UndefinedNameIsAnErrorWithItsLine) {
  EXPECT_EQ(Render("line 1\n{{nope}}", TemplateDict()),
            "ERROR: t.tmpl:2: 'nope' is not defined");
}

TEST(TemplateRenderer, CommentLinesKeepErrorLineNumbers) {
  EXPECT_EQ(Render("## comment\n## comment\n{{nope}}", TemplateDict()),
            "ERROR: t.tmpl:3: 'nope' is not defined");
}

TEST(TemplateRenderer, MisuseIsAnError) {
  TemplateDict root = Items({"p"});
  EXPECT_THAT(Render("{{items}}", root), HasSubstr("'items' is a list"));
  EXPECT_THAT(Render("{{#sep}}{{/sep}}", root), HasSubstr("not a list"));
  EXPECT_THAT(Render("{{#items}}", root), HasSubstr("'items' is never closed"));
  EXPECT_THAT(Render("{{/items}}", root), HasSubstr("closes no block"));
  EXPECT_THAT(Render("{{#items}}{{/sep}}", root), HasSubstr("closes 'items'"));
  EXPECT_THAT(Render("{{a b}}", root), HasSubstr("is not a name"));
  EXPECT_THAT(Render("{{a", root), HasSubstr("without a closing"));
}

} // namespace
} // namespace kiln::codegen
