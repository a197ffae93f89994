"""MDX text directives (`:name`, `:name[label]`, `:name{#id .class key="v"}`) in inline text,
as remark-directive parses them in every Docusaurus 3 page, .md and .mdx alike.

Docusaurus slugs a heading from mdast-to-string, where a directive is only its label: the
heading `join:JitsiMeetConferenceOptions` gets the id `join`. Its unusedDirectives plugin then
shows a directive without label or attributes as the text `:name` again; one with a label shows
the label. Ported from micromark-extension-directive (directive-text, factory-name,
factory-label, factory-attributes).
"""

from __future__ import annotations

import re

from markdown_it.helpers import parseLinkLabel
from markdown_it.rules_inline import StateInline

# factory-name: an ASCII letter, then letters, digits, `-`, `_`; it may not end in `-` or `_`
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
# factory-attributes: `#id`, `.class`, `key`, `key=value`, `key="value"`, `key='value'`
_ATTRIBUTES = re.compile(r"""\{(?:[ \t]*(?:[#.][^\s"'<=>`{}#.]+
                             |[A-Za-z_:][A-Za-z0-9_.:-]*(?:[ \t]*=[ \t]*
                              (?:"[^"]*"|'[^']*'|[^\s"'<=>`{}]+))?))*[ \t]*\}""", re.X)


def text_directive(state: StateInline, silent: bool) -> bool:
    """markdown-it inline rule at `:`: one `text_directive` token (content `:name`, meta
    {"simple": True} when it has neither label nor attributes), the label's own inline tokens
    between `text_directive_open` and `text_directive_close`."""
    src, pos = state.src, state.pos
    if src[pos] != ":" or (pos > 0 and src[pos - 1] == ":"):  # `::x` is not one (directive-text `previous`)
        return False
    name = _NAME.match(src, pos + 1, state.posMax)
    if name is None or name.group()[-1] in "-_":
        return False
    end = name.end()
    if end < state.posMax and src[end] == ":":  # directive-text afterName: `:a:b` is not `:a`
        return False
    label_end = parseLinkLabel(state, end) if end < state.posMax and src[end] == "[" else -1
    after_label = label_end + 1 if label_end >= 0 else end
    attrs = _ATTRIBUTES.match(src, after_label, state.posMax)
    if attrs is not None and src.startswith("{#", after_label) and "{#" not in src[:after_label]:
        # Docusaurus escapes the first `{#` of a heading line before parsing (mdx1Compat
        # headingIds, escapeMarkdownHeadingIds): it is text, not attributes
        attrs = None
    if silent:  # inside a link label: skip over it whole
        state.pos = attrs.end() if attrs is not None else after_label
        return True
    has_attrs = attrs is not None and attrs.group() != "{}"
    simple = label_end < 0 and not has_attrs
    token = state.push("text_directive", "", 0)
    token.content, token.meta = ":" + name.group(), {"simple": simple}
    if label_end >= 0:
        state.push("text_directive_open", "", 1)
        old_max = state.posMax
        state.pos, state.posMax = end + 1, label_end
        state.md.inline.tokenize(state)
        state.posMax = old_max
        state.push("text_directive_close", "", -1)
    state.pos = attrs.end() if attrs is not None else after_label
    return True
